"""Connectome data: embedded datasets and readers for common file formats.

```python
import netdyn as nd

nd.datasets.available()            # ('hcp',)
data = nd.datasets.load("hcp")     # weights [target, source], lengths (mm), labels, fc, bold
train = nd.datasets.subset(data, subjects=[0, 1, 2, 3])   # fc: the group FC of these four
conn = nd.datasets.read_tvb_zip("connectivity_76.zip")
nd.datasets.write_tvb_zip(conn, "copy.zip")
runs = nd.datasets.read_bold(["run-1_timeseries.tsv", "run-2_timeseries.tsv"], n_regions=80)
```

Provenance, licences and processing of the embedded data: `NOTICE.md` in this folder.
"""

from ._bold import BoldRuns as BoldRuns, read_bold as read_bold
from ._dataset import Dataset as Dataset
from ._derived import normalise as normalise, parse_subjects as parse_subjects, subset as subset
from ._load import available as available, from_spec as from_spec, load as load
from ._npy_runs import read_matrix as read_matrix
from ._projection import read_projection_matrix as read_projection_matrix
from ._readers import (
    read_connectome_csv as read_connectome_csv,
    read_csv_matrix as read_csv_matrix,
    read_npz as read_npz,
    read_tvb_zip as read_tvb_zip,
)
from ._tsv import read_tsv_connectome as read_tsv_connectome
from ._tvb_writer import write_tvb_zip as write_tvb_zip
