r"""Ready-made networks: the models ``netdyn fit`` builds and the reference workload.

Plain functions returning ordinary ``netdyn`` objects, so that the command line, the
benchmark scripts and the tutorials build one and the same model; edit the result with
``eqx.tree_at`` like any hand-built network.

```python
import jax, netdyn as nd

net = nd.presets.rww(data.weights, data.lengths, G=0.2)       # netdyn fit --model rww
net = nd.presets.hopf(data.weights, data.lengths, G=0.5)      # netdyn fit --model hopf
net = nd.presets.MODELS["hopf"].network(data.weights, data.lengths)   # its defaults
sol = nd.simulate(**nd.presets.reference_simulation(), key=jax.random.key(0))
```
"""

from .models import MODELS as MODELS, Preset as Preset
from .networks import (
    HOPF_UNITS as HOPF_UNITS,
    hopf as hopf,
    reference_network as reference_network,
    reference_simulation as reference_simulation,
    rww as rww,
    rww_ei_fic as rww_ei_fic,
)
from .selection import NamedWhere as NamedWhere, select as select

__all__ = ["MODELS", "NamedWhere", "Preset", "hopf", "reference_network",
           "reference_simulation", "rww", "rww_ei_fic", "select"]
