# mcpbench as a container image: a static binary on a distroless base, run as
# a non-root user. The image `mcpbench k8s-job --image` needs (mcpbench on the
# PATH), and a way to run mcpbench without a Go toolchain:
#
#   docker build -t mcpbench .
#   docker run --rm --network host mcpbench run --url http://127.0.0.1:8080/mcp --rate 200 --duration 10s
#   docker run --rm mcpbench run          # the embedded reference server, inside the container
#
# The build steps are the commands .ci/run runs (go mod download, the build
# with GOFLAGS=-buildvcs=false), with CGO_ENABLED=0 for a static binary.

# --- build ------------------------------------------------------------------
FROM golang:1.26 AS build
WORKDIR /src
ENV GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOTOOLCHAIN=auto
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go build -trimpath -o /out/mcpbench ./cmd/mcpbench \
 && /out/mcpbench version

# --- run --------------------------------------------------------------------
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mcpbench /usr/local/bin/mcpbench
# uid/gid 65532 (distroless's nonroot); results land in its home unless --out says otherwise
USER nonroot:nonroot
WORKDIR /home/nonroot
ENTRYPOINT ["mcpbench"]
CMD ["--help"]
