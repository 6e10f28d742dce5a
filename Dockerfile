# paywatch: one static-ish binary (cgo for ltcd's secp256k1) on Debian.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go build -buildvcs=false -o /out/paywatch ./cmd/paywatch

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/paywatch /usr/local/bin/paywatch
# The entrypoint writes the config from the environment (networks, methods,
# checkout, webhooks), migrates, makes the first API key once into the
# state volume, and runs serve; `health` is the compose healthcheck.
COPY deploy/docker/entrypoint.sh /usr/local/bin/paywatch-entrypoint
COPY deploy/docker/paywatch.yaml /etc/paywatch/paywatch.yaml
RUN mkdir -p /var/lib/paywatch && chown 65532:65532 /var/lib/paywatch
ENV PAYWATCH_CONFIG=/tmp/paywatch/paywatch.yaml
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/paywatch-entrypoint"]
CMD ["serve"]
