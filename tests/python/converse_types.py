"""Amazon Bedrock's Converse API as botocore's own service model describes it (the
`bedrock-runtime` service, botocore pinned in tests/requirements.txt): a request body is
validated against the input shape of the operation `Converse` (or `CountTokens`), a
response against the output shape, with botocore's ParamValidator — which checks
required and unknown members, types, minimums, tagged unions and documents — and, since
it checks neither enums, maximums nor patterns, those too. The body names no model (the
URL does: POST /model/{modelId}/converse): `modelId` is added for the check."""
import re

import botocore.session
from botocore.validate import ParamValidator

BEDROCK = botocore.session.get_session().get_service_model("bedrock-runtime")
MODEL_ID = "anthropic.claude-sonnet-5-v1:0"


class StrictParamValidator(ParamValidator):
    """ParamValidator, and enums, maximums, patterns (matched whole, as the service does)
    and map sizes (collected in `extra`)."""

    def validate(self, params, shape):
        self.extra = []
        return super().validate(params, shape)

    def _validate_string(self, param, shape, errors, name):
        super()._validate_string(param, shape, errors, name)
        if not isinstance(param, str):
            return
        if getattr(shape, "enum", None) and param not in shape.enum:
            self.extra.append(f"{name}: {param!r} is not one of {shape.enum}")
        if "max" in shape.metadata and len(param) > shape.metadata["max"]:
            self.extra.append(f"{name}: longer than {shape.metadata['max']}")
        pattern = shape.metadata.get("pattern")
        if pattern and re.fullmatch(pattern, param) is None:
            self.extra.append(f"{name}: does not match {pattern}")

    def _most(self, param, shape, name, value):
        if "max" in shape.metadata and value > shape.metadata["max"]:
            self.extra.append(f"{name}: {param!r} over {shape.metadata['max']}")

    def _validate_integer(self, param, shape, errors, name):
        super()._validate_integer(param, shape, errors, name)
        if isinstance(param, int):
            self._most(param, shape, name, param)

    def _validate_double(self, param, shape, errors, name):
        super()._validate_double(param, shape, errors, name)
        if isinstance(param, (int, float)):
            self._most(param, shape, name, param)

    _validate_float = _validate_double

    def _validate_map(self, param, shape, errors, name):
        super()._validate_map(param, shape, errors, name)
        if isinstance(param, dict):
            if "min" in shape.metadata and len(param) < shape.metadata["min"]:
                self.extra.append(f"{name}: fewer than {shape.metadata['min']} entries")
            self._most(param, shape, name, len(param))

    def _validate_list(self, param, shape, errors, name):
        super()._validate_list(param, shape, errors, name)
        if isinstance(param, list):
            self._most(param, shape, name, len(param))
            member = shape.member
            if member.type_name == "string" and getattr(member, "enum", None):
                for i, item in enumerate(param):
                    if item not in member.enum:
                        self.extra.append(f"{name}[{i}]: {item!r} is not one of {member.enum}")


def check(params: dict, shape) -> None:
    v = StrictParamValidator()
    report = v.validate(params, shape)
    assert not report.has_errors(), report.generate_report()
    assert not v.extra, "\n".join(v.extra)


def assert_valid_converse(body: dict, model_id: str = MODEL_ID) -> None:
    """A Converse request body (botocore's ConverseRequest, modelId added)."""
    assert "modelId" not in body, "the URL names the model, not the body"
    check({**body, "modelId": model_id}, BEDROCK.operation_model("Converse").input_shape)


def assert_valid_count(body: dict, model_id: str = MODEL_ID) -> None:
    """A CountTokens request body (botocore's CountTokensRequest, modelId added)."""
    check({**body, "modelId": model_id}, BEDROCK.operation_model("CountTokens").input_shape)


def converse_response(body: dict) -> dict:
    """A Converse response, as botocore's ConverseResponse describes it."""
    check(body, BEDROCK.operation_model("Converse").output_shape)
    return body
