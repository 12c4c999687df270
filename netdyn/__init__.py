"""netdyn: differentiable, delay-coupled brain network models in JAX and Equinox."""

from . import (
    _plot as plot,  # noqa: F401 - the namespace nd.plot
    _presets as presets,  # noqa: F401 - the namespace nd.presets
    cli as cli,
    datasets as datasets,
    inference as inference,
)
from ._coupling._base import (
    AbstractCoupling as AbstractCoupling,
    AbstractDelayedCoupling as AbstractDelayedCoupling,
    AbstractInstantaneousCoupling as AbstractInstantaneousCoupling,
)
from ._coupling.difference import DelayedDifference as DelayedDifference, Difference as Difference
from ._coupling.hyperbolic_tangent import (
    DelayedHyperbolicTangent as DelayedHyperbolicTangent,
    HyperbolicTangent as HyperbolicTangent,
)
from ._coupling.kuramoto import (
    DelayedKuramotoSine as DelayedKuramotoSine,
    KuramotoSine as KuramotoSine,
)
from ._coupling.linear import DelayedLinear as DelayedLinear, Linear as Linear
from ._coupling.sigmoidal import DelayedSigmoidal as DelayedSigmoidal, Sigmoidal as Sigmoidal
from ._coupling.sigmoidal_jansen_rit import (
    DelayedSigmoidalJansenRit as DelayedSigmoidalJansenRit,
    SigmoidalJansenRit as SigmoidalJansenRit,
)
from ._dynamics._base import AbstractDynamics as AbstractDynamics
from ._dynamics.coombes_byrne_2d import CoombesByrne2D as CoombesByrne2D
from ._dynamics.epileptor import Epileptor as Epileptor
from ._dynamics.generic_2d_oscillator import Generic2dOscillator as Generic2dOscillator
from ._dynamics.jansen_rit import JansenRit as JansenRit
from ._dynamics.kuramoto import Kuramoto as Kuramoto
from ._dynamics.larter_breakspear import LarterBreakspear as LarterBreakspear
from ._dynamics.linear import LinearDynamics as LinearDynamics
from ._dynamics.lorenz import Lorenz as Lorenz
from ._dynamics.montbrio_pazo_roxin import MontbrioPazoRoxin as MontbrioPazoRoxin
from ._dynamics.reduced_wong_wang import ReducedWongWang as ReducedWongWang
from ._dynamics.reduced_wong_wang_exc_inh import ReducedWongWangExcInh as ReducedWongWangExcInh
from ._dynamics.sup_hopf import SupHopf as SupHopf
from ._dynamics.wilson_cowan import WilsonCowan as WilsonCowan
from ._evaluation.heldout import (
    HeldoutScores as HeldoutScores,
    heldout_cautions as heldout_cautions,
    heldout_scores as heldout_scores,
)
from ._evaluation.long_check import long_check as long_check
from ._evaluation.long_check_text import (
    long_check_caution as long_check_caution,
    long_check_text as long_check_text,
)
from ._fit.backtrack import BacktrackState as BacktrackState, backtrack as backtrack
from ._fit.errors import FitDivergedError as FitDivergedError
from ._fit.fit import fit as fit
from ._fit.history import FitHistory as FitHistory
from ._fit.multistart import fit_multistart as fit_multistart
from ._fit.optimizer import (
    fit_optimizer as fit_optimizer,
    scale_updates as scale_updates,
)
from ._functions import logistic as logistic, z_over_one_minus_exp as z_over_one_minus_exp
from ._graph._base import (
    AbstractDelayGraph as AbstractDelayGraph,
    AbstractGraph as AbstractGraph,
    DelayIndex as DelayIndex,
)
from ._graph._checks import NearestDelayGradientWarning as NearestDelayGradientWarning
from ._graph._dense_layout import AbstractDenseGraph as AbstractDenseGraph
from ._graph._sparse_layout import AbstractSparseGraph as AbstractSparseGraph
from ._graph.delay import DelayGraph as DelayGraph
from ._graph.dense import DenseGraph as DenseGraph
from ._graph.sparse import SparseGraph as SparseGraph
from ._graph.sparse_delay import SparseDelayGraph as SparseDelayGraph
from ._inference.check_gradient import (
    GradientCheck as GradientCheck,
    check_gradient as check_gradient,
)
from ._inference.identifiability import (
    Identifiability as Identifiability,
    identifiability as identifiability,
)
from ._inference.leave_one_out import leave_one_run_out as leave_one_run_out
from ._inference.profile import (
    Profile as Profile,
    interval_profile as interval_profile,
    local_profile as local_profile,
    profile as profile,
)
from ._inference.uncertainty import (
    Uncertainty as Uncertainty,
    t_quantile as t_quantile,
    uncertainty as uncertainty,
)
from ._linear.fixed_point import Drift as Drift
from ._linear.linear_fc import LinearFc as LinearFc, linear_fc as linear_fc
from ._linear.lyapunov import (
    BlockCovariance as BlockCovariance,
    block_lyapunov as block_lyapunov,
    lyapunov as lyapunov,
)
from ._linear.stability import spectral_abscissa as spectral_abscissa
from ._loss._base import (
    AbstractChainedLoss as AbstractChainedLoss,
    AbstractFcLoss as AbstractFcLoss,
    AbstractLoss as AbstractLoss,
)
from ._loss.chained import Chained as Chained
from ._loss.fc_loss import FcLoss as FcLoss
from ._loss.linear_fc_loss import LinearFcLoss as LinearFcLoss
from ._memory.gradient import GradientMemory as GradientMemory, gradient_memory as gradient_memory
from ._monitor._base import AbstractMonitor as AbstractMonitor
from ._monitor.bold import Bold as Bold
from ._monitor.hrf_bold import HrfBold as HrfBold
from ._monitor.lead_field import LeadField as LeadField
from ._monitor.raw import Raw as Raw
from ._monitor.temporal_average import TemporalAverage as TemporalAverage
from ._monitor.whole_periods import whole_periods as whole_periods
from ._network import Network as Network
from ._noise._base import AbstractNoise as AbstractNoise
from ._noise.additive import AdditiveNoise as AdditiveNoise
from ._noise.multiplicative import MultiplicativeNoise as MultiplicativeNoise
from ._observation._stats import upper_triangle as upper_triangle
from ._observation.fc import fc as fc
from ._observation.fcd import fcd as fcd, fcd_values as fcd_values
from ._observation.fcd_ks import fcd_ks as fcd_ks
from ._observation.losses import (
    fc_correlation as fc_correlation,
    fcd_distance as fcd_distance,
    one_minus_pearson as one_minus_pearson,
    rmse as rmse,
)
from ._observation.runs import (
    ks_statistic as ks_statistic,
    noise_ceiling as noise_ceiling,
    runs_fc as runs_fc,
    score_runs as score_runs,
)
from ._observation.spectrum import (
    band_power as band_power,
    peak_frequency as peak_frequency,
    welch as welch,
)
from ._observation.summary import fc_summary as fc_summary
from ._parameterisation import maps as maps  # the namespace nd.maps
from ._parameterisation._base import (
    AbstractNetworkParameterisation as AbstractNetworkParameterisation,
    AbstractParameterisation as AbstractParameterisation,
    resolve_parameters as resolve_parameters,
)
from ._parameterisation.connectivity_scaling import (
    EdgeScaling as EdgeScaling,
    InputScaling as InputScaling,
)
from ._parameterisation.feedback_inhibition import FeedbackInhibition as FeedbackInhibition
from ._parameterisation.map_parameter import MapParameter as MapParameter
from ._parameterisation.regional_deviation import RegionalDeviation as RegionalDeviation
from ._parameters.bounds import (
    AbstractTransform as AbstractTransform,
    Identity as Identity,
    Interval as Interval,
    Positive as Positive,
)
from ._persistence.fit_checkpoint import Checkpoint as Checkpoint
from ._persistence.interrupt import defer_interrupts as defer_interrupts
from ._persistence.resume import saved_steps as saved_steps
from ._persistence.run_folder import RunFolder as RunFolder
from ._persistence.run_settings import RunSettings as RunSettings
from ._remat._base import AbstractRemat as AbstractRemat
from ._remat._schedule import (
    checkpoint_blocks as checkpoint_blocks,
    default_unroll as default_unroll,
)
from ._remat.auto import Auto as Auto, RematChoice as RematChoice
from ._remat.multilevel import MultiLevel as MultiLevel
from ._remat.nested import Nested as Nested
from ._remat.no_remat import NoRemat as NoRemat
from ._remat.parse import parse_remat as parse_remat
from ._remat.policy import Policy as Policy
from ._remat.uniform import Uniform as Uniform
from ._search.level_search import LevelSearch as LevelSearch, level_search as level_search
from ._search.scan_record import (
    read_scan_record as read_scan_record,
    scan_no_crossing_text as scan_no_crossing_text,
    scan_record as scan_record,
    scan_skipped_text as scan_skipped_text,
)
from ._search.scan_start import StartScan as StartScan, scan_start as scan_start
from ._search.sweep import sweep as sweep
from ._simulate.choose_remat import choose_remat as choose_remat
from ._simulate.simulate import simulate as simulate
from ._solution import SimulationState as SimulationState, Solution as Solution
from ._solver._base import AbstractSolver as AbstractSolver
from ._solver._runge_kutta import (
    AbstractRungeKutta as AbstractRungeKutta,
    ButcherTableau as ButcherTableau,
)
from ._solver.euler import Euler as Euler
from ._solver.heun import Heun as Heun
from ._solver.rk4 import RK4 as RK4
from ._stimulus._base import AbstractStimulus as AbstractStimulus
from ._stimulus.pulse_train import PulseTrain as PulseTrain
from ._stimulus.sampled import SampledStimulus as SampledStimulus

__version__ = "0.1.0"
