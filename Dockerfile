# PostgreSQL 18 with pgprompt, built from this repository in a multi-stage build.
# Untested here: this project's machines have no container engine. Build with:
#   docker build -t pgprompt:0.6.0 .
#   docker run -e POSTGRES_PASSWORD=secret -p 5432:5432 pgprompt:0.6.0
# then: CREATE EXTENSION pgprompt;
FROM postgres:18 AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
        build-essential ca-certificates clang curl libclang-dev pkg-config postgresql-server-dev-18 \
    && rm -rf /var/lib/apt/lists/*
ENV RUSTUP_HOME=/usr/local/rustup CARGO_HOME=/usr/local/cargo PATH=/usr/local/cargo/bin:$PATH
RUN curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --default-toolchain 1.95.0
RUN cargo install cargo-pgrx --version 0.18.1 --locked \
    && cargo pgrx init --pg18 /usr/lib/postgresql/18/bin/pg_config
WORKDIR /src
COPY . .
RUN cargo pgrx package --pg-config /usr/lib/postgresql/18/bin/pg_config --out-dir /pkg

FROM postgres:18
COPY --from=build /pkg/usr/lib/postgresql/18/lib/ /usr/lib/postgresql/18/lib/
COPY --from=build /pkg/usr/share/postgresql/18/extension/ /usr/share/postgresql/18/extension/
