"""The network lab of `scripts/slurm-local up --network lab`: each emulated node in its own
network namespace, a management bridge for Slurm and munge, and a shaped switch tree (node,
group and island links) for the jobs' MPI traffic. Stdlib only, like slurm-local.

    config.py   network.toml -> LabConfig (rates, bursts, queues per level; qdisc; MTU)
    plan.py     LabConfig + topology tree -> Plan (namespaces, bridges, veths, addresses)
    netops.py   ip / tc / nsenter / /proc wrappers
    lab.py      create / destroy with a ledger of what was created; link statistics
"""
