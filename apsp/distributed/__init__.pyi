# apsp.distributed's public names: this stub is their one list. Type checkers read it instead of
# __init__.py, which loads each name from its module on first use (lazy_loader.attach_stub), so that
# importing apsp.distributed does not start MPI.
from .api import DistributedRun as DistributedRun, cuda_aware_mpi as cuda_aware_mpi
from .api import output_format as output_format, rank_table as rank_table, solve as solve
from .faults import RankFailedError as RankFailedError
from .grid import ProcessGrid as ProcessGrid, grid_shape as grid_shape
from .layout import BlockCyclic as BlockCyclic
from .stats import distance_stats as distance_stats
