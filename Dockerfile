# syntax=docker/dockerfile:1
# The broker as a small container image: the compiled binary on a distroless glibc base (no
# shell, no package manager), running as an unprivileged user. docs/operations.md, "Container".
#
#   docker build -t broker .
#   docker run -p 9092:9092 -p 8080:8080 -v broker-data:/var/lib/broker broker \
#     --advertise-kafka-addr localhost:9092

# Build: npm ci brings Bun as a dev dependency; npm run build compiles dist/broker.
FROM node:22-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && mkdir -p /out/data

# Run: glibc and the binary only (the binary carries the Bun runtime; it needs nothing else).
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/dist/broker /usr/local/bin/broker
# The data dir belongs to the image's user (65532), so a fresh named volume is writable.
COPY --from=build --chown=65532:65532 /out/data /var/lib/broker
VOLUME /var/lib/broker
ENV BROKER_DATA_DIR=/var/lib/broker
# Kafka, HTTP, cluster (TCP and UDP).
EXPOSE 9092/tcp 8080/tcp 9093/tcp 9093/udp
# SIGTERM (docker stop) shuts the broker down cleanly; give it more than the default 10 s when
# partitions must move away first (docker stop -t 20).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/broker"]
