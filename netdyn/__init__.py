"""netdyn: differentiable, delay-coupled brain network models in JAX and Equinox."""

from ._coupling._base import (
    AbstractCoupling as AbstractCoupling,
    AbstractDelayedCoupling as AbstractDelayedCoupling,
    AbstractInstantaneousCoupling as AbstractInstantaneousCoupling,
)
from ._coupling.linear import DelayedLinear as DelayedLinear, Linear as Linear
from ._dynamics._base import AbstractDynamics as AbstractDynamics
from ._dynamics.reduced_wong_wang import ReducedWongWang as ReducedWongWang
from ._graph._base import (
    AbstractDelayGraph as AbstractDelayGraph,
    AbstractGraph as AbstractGraph,
    DelayIndex as DelayIndex,
)
from ._graph.delay import DelayGraph as DelayGraph
from ._graph.dense import DenseGraph as DenseGraph
from ._monitor._base import AbstractMonitor as AbstractMonitor
from ._monitor.raw import Raw as Raw
from ._monitor.temporal_average import TemporalAverage as TemporalAverage
from ._network import Network as Network
from ._noise._base import AbstractNoise as AbstractNoise
from ._noise.additive import AdditiveNoise as AdditiveNoise
from ._noise.multiplicative import MultiplicativeNoise as MultiplicativeNoise
from ._remat._base import AbstractRemat as AbstractRemat
from ._remat.no_remat import NoRemat as NoRemat
from ._simulate import simulate as simulate
from ._solution import SimulationState as SimulationState, Solution as Solution
from ._solver._base import AbstractSolver as AbstractSolver
from ._solver.euler import Euler as Euler
from ._solver.heun import Heun as Heun
from ._solver.rk4 import RK4 as RK4

__version__ = "0.1.0"
