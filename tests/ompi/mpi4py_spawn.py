"""mpi4py's dynamic processes under zpmix run: the parent spawns 2 children of this script
(MPI.COMM_WORLD.Spawn), both sides merge the intercommunicator, the merged rank 0 sends
42 + r to every other rank r, and each prints "<parent|child> R merged M of N got V"."""
import sys

from mpi4py import MPI

parent = MPI.Comm.Get_parent()
if parent == MPI.COMM_NULL:
    role = "parent"
    inter = MPI.COMM_WORLD.Spawn(sys.executable, args=[__file__], maxprocs=2)
    merged = inter.Merge(high=False)
else:
    role = "child"
    inter = parent
    merged = inter.Merge(high=True)
rank, size = merged.Get_rank(), merged.Get_size()
if rank == 0:
    for r in range(1, size):
        merged.send(42 + r, dest=r, tag=9)
    value = 42
else:
    value = merged.recv(source=0, tag=9)
merged.Barrier()
print(f"{role} {MPI.COMM_WORLD.Get_rank()} merged {rank} of {size} got {value}", flush=True)
merged.Free()
inter.Disconnect()
sys.exit(0 if value == 42 + rank else 1)
