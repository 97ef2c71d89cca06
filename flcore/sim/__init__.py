"""The simulation engine: round loop, client sampling, local training, evaluation."""
from flcore.record_format import summarize
from flcore.sim.engine import RoundResult, Simulation, resolve_engine
from flcore.sim.federated_data import FederatedData, build_federated_data
from flcore.sim.sampling import ClientPlan, plan_client_round, sample_clients

__all__ = [
    "ClientPlan", "FederatedData", "RoundResult", "Simulation", "build_federated_data", "plan_client_round",
    "resolve_engine", "sample_clients", "summarize",
]
