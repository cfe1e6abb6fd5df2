"""scripts/architecture-map.py reads the map's tree by path: each violation planted in a copy
of ARCHITECTURE.md is found; the map as it is passes."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("architecture_map", ROOT / "scripts" / "architecture-map.py")
amap = importlib.util.module_from_spec(spec)
spec.loader.exec_module(amap)
MAP = (ROOT / "ARCHITECTURE.md").read_text()
COUNT = "    count.rs           count bodies (each wire's endpoint keys are in its folder)\n"


def test_the_map_as_it_is_places_every_file():
    assert amap.check(MAP, ROOT) == []


def test_a_file_listed_under_the_wrong_folder_is_found():
    assert COUNT in MAP
    moved = MAP.replace(COUNT, "").replace("    gate.rs ", COUNT + "    gate.rs ")
    assert amap.check(moved, ROOT) == [
        "ARCHITECTURE.md names core/src/compile/count.rs, which does not exist",
        "core/src/wire/count.rs is not named in ARCHITECTURE.md at its path",
    ]


def test_a_bare_name_in_a_note_places_nothing():
    dropped = MAP.replace(COUNT, "").replace("the pretty printer", "the pretty printer; count.rs")
    assert amap.check(dropped, ROOT) == ["core/src/wire/count.rs is not named in ARCHITECTURE.md at its path"]


def test_a_wire_folders_shared_file_is_placed_only_for_the_wires_named():
    fewer = MAP.replace("anthropic,\n                       responses and gemini also replay.rs",
                        "anthropic and\n                       gemini also replay.rs")
    assert fewer != MAP
    assert amap.check(fewer, ROOT) == ["core/src/wire/responses/replay.rs is not named in ARCHITECTURE.md at its path"]
