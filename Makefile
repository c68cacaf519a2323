# streamd: make run starts the daemon on a sample stream and queries it;
# make test runs every check and test.

GO          ?= go
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
BIN         := bin
GLFW_PKGS   := x11 xrandr xinerama xcursor xi xxf86vm
RUN_DIR     := $(BIN)/run

.PHONY: all build run test test-short vet lint fmt proto bench screenshot clean soak readme

all: build

build:
	$(GO) build -o $(BIN)/streamd ./cmd/streamd
	$(GO) build -o $(BIN)/loadgen ./cmd/loadgen

# The quick start: a daemon with the defaults (TCP ingest, a local data
# dir), the household sample replayed into it, its quantiles and heavy
# hitters, then a clean shutdown.
run: build
	@scripts/quickstart.sh $(BIN) $(RUN_DIR)

# Every check and test. The GPU back-ends are tested on Mesa's software
# rasteriser through EGL when its libraries are installed, and the GLFW
# context under Xvfb when the X11 libraries are too (.ci/run installs both).
# The web page is tested in headless Chromium and /metrics with promtool
# when they are installed; in CI (CI set) those tests fail without them.
test: vet lint
	$(GO) test ./...
	cd bench/peers && $(GO) vet . && $(GO) test -short .
	@command -v chromium >/dev/null || echo "chromium not installed: skipped the web page's test in headless Chromium (apt-get install chromium)"
	@command -v promtool >/dev/null || echo "promtool not installed: skipped promtool check metrics (apt-get install prometheus)"
	@if pkg-config --exists egl 2>/dev/null; then \
		echo "go test -tags gpu ./gpusort/..."; $(GO) test -tags gpu ./gpusort/...; \
	else echo "EGL not installed: skipping the GPU back-end tests (apt-get install libegl-dev libgl1-mesa-dev libgl1-mesa-dri)"; fi
	@if pkg-config --exists egl $(GLFW_PKGS) 2>/dev/null && command -v xvfb-run >/dev/null; then \
		echo "xvfb-run -a go test -tags gpu,glfw -run GLFW ./gpusort/..."; xvfb-run -a $(GO) test -tags gpu,glfw -run GLFW ./gpusort/...; \
	else echo "X11 libraries or xvfb-run missing: skipping the GLFW context tests"; fi

# Run the README's examples in order, as a newcomer would, in a scratch copy
# of the checkout (scripts/readme-walk.sh; it skips the make test block).
# Needs nc, kcat, curl, openssl and grpcurl (.ci/run installs them).
readme:
	@scripts/readme-walk.sh

test-short:
	$(GO) test -short ./...

vet: fmt
	$(GO) vet ./...
	@if pkg-config --exists egl 2>/dev/null; then $(GO) vet -tags gpu ./gpusort/...; fi
	@if pkg-config --exists egl $(GLFW_PKGS) 2>/dev/null; then $(GO) vet -tags gpu,glfw ./gpusort/...; fi

lint:
	$(GO) run $(STATICCHECK) ./...

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Regenerate the gRPC code with pinned tools (no system protoc needed).
proto:
	$(GO) generate ./api/proto/

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/radix/ ./summary/

# A long fault-injection soak of the real daemon (see soak/doc.go):
# make soak DURATION=30m [SEED=42] [FAULTS=kill,term,corrupt,full,double-start].
# Without SEED it draws one and prints it.
DURATION ?= 10m
SEED     ?= random
FAULTS   ?= all
soak:
	$(GO) test ./soak/ -run '^TestSoak$$' -count 1 -v -timeout 0 -args -seed $(SEED) -duration $(DURATION) -faults $(FAULTS)

# Retake the web page's screenshot in docs/ (needs chromium).
screenshot:
	$(GO) test ./cmd/streamd/ -run '^TestWebPage$$' -count 1 -args -screenshot $(CURDIR)/docs/web-page.png

clean:
	rm -rf $(BIN)
