//! MPI_Gather / MPI_Scatter schedules after ompi/mca/coll/base/coll_base_gather.c and
//! coll_base_scatter.c (Open MPI 4.1): basic linear (blocking, one peer at a time at the
//! root), binomial (over the in-order binomial tree), linear_sync (gather: the root
//! invites each rank with an empty message before its first segment) and linear_nb
//! (scatter: all sends posted at once).

use super::topo;
use super::util::{real, seg_count, vrank};
use super::{Algo, AlgoParams, CollError, CollKind, CollSpec, Step};

pub fn schedule(
    spec: &CollSpec,
    algo: Algo,
    params: &AlgoParams,
    me: u32,
) -> Result<Vec<Step>, CollError> {
    let (p, root, b) = (spec.comm_size, spec.root, spec.bytes);
    let others = || (0..p).filter(move |&r| r != root);
    let gather = spec.kind == CollKind::Gather;
    Ok(match (algo, gather) {
        (Algo::Linear, _) if me != root => {
            vec![if gather {
                Step::send(root, b)
            } else {
                Step::recv(root, b)
            }]
        }
        (Algo::Linear, true) => others().map(|r| Step::recv(r, b)).collect(),
        (Algo::Linear, false) => others().map(|r| Step::send(r, b)).collect(),
        (Algo::Binomial, _) => binomial(p, root, me, b, gather),
        (Algo::LinearSync, true) => linear_sync(spec, params, me),
        (Algo::LinearNb, false) if me == root => {
            vec![Step {
                sends: others().map(|r| (r, b)).collect(),
                ..Step::default()
            }]
        }
        (Algo::LinearNb, false) => vec![Step::recv(root, b)],
        _ => {
            return Err(CollError::Unsupported {
                kind: spec.kind,
                algo,
            })
        }
    })
}

/// Binomial gather: receive each child's whole subtree (children in tree order), then send
/// my subtree to the parent. Binomial scatter is the mirror image, largest subtree first.
fn binomial(p: u32, root: u32, me: u32, b: u64, gather: bool) -> Vec<Step> {
    let tree = topo::in_order_bmtree(p, root, me);
    let sub = |r: u32| u64::from(topo::in_order_subtree(p, vrank(r, root, p))) * b;
    let mut steps = Vec::new();
    if gather {
        steps.extend(tree.children.iter().map(|&c| Step::recv(c, sub(c))));
        if let Some(parent) = tree.parent {
            steps.push(Step::send(parent, sub(me)));
        }
    } else {
        if let Some(parent) = tree.parent {
            steps.push(Step::recv(parent, sub(me)));
        }
        steps.extend(tree.children.iter().rev().map(|&c| Step::send(c, sub(c))));
    }
    steps
}

/// gather_intra_linear_sync: the first segment (params.segsize bytes, 0 = the whole block)
/// of each rank is requested by an empty message from the root; the rest follows freely.
fn linear_sync(spec: &CollSpec, params: &AlgoParams, me: u32) -> Vec<Step> {
    let (p, root, b) = (spec.comm_size, spec.root, spec.bytes);
    let elem = spec.elem();
    let first = seg_count(params.segsize, elem, b / elem) * elem;
    let first = first.min(b);
    let rest = b - first;
    if me != root {
        return vec![
            Step::recv(root, 0),
            Step::send(root, first),
            Step::send(root, rest),
        ];
    }
    let mut steps: Vec<Step> = (1..p)
        .map(|i| {
            let r = real(i, root, p);
            Step::sendrecv(r, 0, r, first)
        })
        .collect();
    let recvs = (1..p).map(|i| (real(i, root, p), rest)).collect();
    steps.push(Step {
        recvs,
        ..Step::default()
    });
    steps
}
