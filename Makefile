# Set-up-and-go targets.  Each creates .venv (once) with the pinned versions, then runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# torch and torchvision for a machine without an NVIDIA driver (no nvidia-smi): the CPU
# builds of the pinned pair from PyTorch's CPU wheel index (2.14.1+cpu satisfies the
# constraint ==2.14.1), without the 3 GB of CUDA libraries of the default wheels.  If that
# index cannot be reached, the default wheels are installed as on a GPU machine.
# TORCH_VARIANT=cuda (or cpu) overrides the detection.
TORCH_VARIANT ?= $(if $(shell command -v nvidia-smi 2>/dev/null),cuda,cpu)
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu

.PHONY: main test test-fast test-extended venv clean book-smoke

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c constraints.txt --upgrade pip
	@if [ "$(TORCH_VARIANT)" = cpu ]; then \
	  echo "no NVIDIA driver here: the CPU builds of torch and torchvision from $(TORCH_CPU_INDEX)"; \
	  $(BIN)/pip install --quiet --timeout 30 --retries 1 -c constraints.txt --index-url $(TORCH_CPU_INDEX) \
	    torch torchvision \
	  || echo "$(TORCH_CPU_INDEX) could not be reached: the default torch wheels, with their CUDA libraries"; \
	fi
	$(BIN)/pip install --quiet -c constraints.txt -e ".[dev,book,cluster,flower]"
	$(BIN)/python -c "import torch, torchvision; torchvision.ops.nms; print('torch', torch.__version__, 'torchvision', torchvision.__version__)"
	touch $(STAMP)

venv: $(STAMP)

## main: the reproduction book at the small scale, offline on a CPU -> _build/html/index.html
## (BOOK_FLAGS: more `flcore book` options, e.g. BOOK_FLAGS="--prefer-scale paper" after a bundle import)
main: $(STAMP)
	$(BIN)/flcore book --scale small --store runs $(BOOK_FLAGS)

## book-smoke: the book at the smoke scale (about a minute)
book-smoke: $(STAMP)
	$(BIN)/flcore book --scale smoke --store runs

## test: the test suite (CI runs this)
test: $(STAMP)
	$(BIN)/python -m pytest -q

## test-fast: the tests not marked slow or extended, on two workers (a quick check while editing)
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 -m "not slow and not extended"

## test-extended: the extended tier -- every learning family, Flower's engine on every family
test-extended: $(STAMP)
	$(BIN)/python -m pytest -q -m extended

clean:
	rm -rf $(VENV) runs _build .pytest_cache book/artifacts book/_artifacts.json
