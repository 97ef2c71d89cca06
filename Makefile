# Set-up-and-go targets.  Each creates .venv (once) with the pinned versions, then runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: main test venv clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -c constraints.txt -e ".[dev]"
	$(BIN)/python -c "import torch, torchvision; torchvision.ops.nms; print('torch', torch.__version__, 'torchvision', torchvision.__version__)"
	touch $(STAMP)

venv: $(STAMP)

## main: the default small experiment (FedSAM on MNIST-1D, 100 clients, alpha = 0), offline on a CPU
main: $(STAMP)
	$(BIN)/flcore run --method fedsam --dataset mnist1d --alpha 0 --clients 100 --per-round 5 \
	    --rounds 300 --seed 0 --store runs --json

## test: the test suite
test: $(STAMP)
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) runs _build .pytest_cache
