//! Communication trees of ompi/mca/coll/base/coll_base_topo.c (Open MPI 4.1): binomial
//! (`build_bmtree`), in-order binomial (`build_in_order_bmtree`), k-nomial (`build_kmtree`),
//! n-ary (`build_tree`, fan-out 2 = "binary"), in-order binary (`build_in_order_bintree`) and
//! chains (`build_chain`, one chain = "pipeline"). Ranks are real communicator ranks.

use super::util::{real, vrank};

/// One rank's view of a tree: its parent (None at the root) and its children in the order
/// Open MPI lists them (`tree_next`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    pub parent: Option<u32>,
    pub children: Vec<u32>,
}

/// Binomial tree: parent = index ^ highest bit, children index | mask for growing masks.
pub fn bmtree(p: u32, root: u32, me: u32) -> Tree {
    let v = vrank(me, root, p);
    let mut mask = if v == 0 {
        1
    } else {
        (v + 1).next_power_of_two()
    };
    let parent = (v != 0).then(|| real(v ^ (mask >> 1), root, p));
    let mut children = Vec::new();
    while mask < p {
        let child = v ^ mask;
        if child >= p {
            break;
        }
        children.push(real(child, root, p));
        mask <<= 1;
    }
    Tree { parent, children }
}

/// In-order binomial tree: parent = index - lowest bit, children index + mask below it.
pub fn in_order_bmtree(p: u32, root: u32, me: u32) -> Tree {
    let v = vrank(me, root, p);
    let mut children = Vec::new();
    let mut parent = None;
    let mut mask = 1u32;
    while mask < p {
        let remote = v ^ mask;
        if remote < v {
            parent = Some(real(remote, root, p));
            break;
        } else if remote < p {
            children.push(real(remote, root, p));
        }
        mask <<= 1;
    }
    Tree { parent, children }
}

/// K-nomial tree of radix `radix` (largest subtrees first, as in the knomial comment's
/// example: radix 4, 10 ranks: 0 -> 4 8 1 2 3).
pub fn kmtree(p: u32, root: u32, me: u32, radix: u32) -> Tree {
    let radix = u64::from(radix.max(2));
    let v = u64::from(vrank(me, root, p));
    let p64 = u64::from(p);
    let mut mask = 1u64;
    let mut parent = None;
    while mask < p64 {
        if v % (radix * mask) != 0 {
            let par = v / (radix * mask) * (radix * mask);
            parent = Some(real(par as u32, root, p));
            break;
        }
        mask *= radix;
    }
    mask /= radix;
    let mut children = Vec::new();
    while mask > 0 {
        for r in 1..radix {
            let child = v + mask * r;
            if child < p64 {
                children.push(real(child as u32, root, p));
            }
        }
        mask /= radix;
    }
    Tree { parent, children }
}

/// N-ary tree of `build_tree`: level-order numbering, children shifted + delta*(i+1).
pub fn ntree(p: u32, root: u32, me: u32, fanout: u32) -> Tree {
    let fanout = u64::from(fanout.max(1));
    let s = u64::from(vrank(me, root, p));
    let p64 = u64::from(p);
    // level of s: levels hold 1, f, f^2, ... nodes
    let (mut level, mut num, mut width) = (0u32, 0u64, 1u64);
    loop {
        num += width;
        if num > s {
            break;
        }
        width *= fanout;
        level += 1;
    }
    let delta = fanout.pow(level);
    let mut children = Vec::new();
    for i in 0..fanout {
        let c = s + delta * (i + 1);
        if c >= p64 {
            break;
        }
        children.push(real(c as u32, root, p));
    }
    let parent = if s == 0 {
        None
    } else if s <= fanout {
        Some(root % p)
    } else {
        // nodes above my level: 1 + f + ... + f^(level-1)
        let slimit: u64 = (0..level).map(|l| fanout.pow(l)).sum();
        let mut sp = s;
        while sp >= slimit {
            sp -= delta / fanout;
        }
        Some(real(sp as u32, root, p))
    };
    Tree { parent, children }
}

/// In-order binary tree rooted at rank p-1 (build_in_order_bintree); the caller moves the
/// result to the real root afterwards, as reduce_intra_in_order_binary does.
pub fn in_order_bintree(p: u32, me: u32) -> Tree {
    let (mut size, mut myrank, mut delta) = (p as i64, me as i64, 0i64);
    let mut parent_of_me = None;
    let mut parent = size - 1;
    let mut children = Vec::new();
    loop {
        let rightsize = size >> 1;
        let (mut lchild, mut rchild) = (-1i64, -1i64);
        if size - 1 > 0 {
            lchild = parent - 1;
            if lchild > 0 {
                rchild = rightsize - 1;
            }
        }
        if myrank == parent {
            for c in [lchild, rchild] {
                if c >= 0 {
                    children.push((c + delta) as u32);
                }
            }
            break;
        }
        if myrank > rchild {
            if myrank == lchild {
                parent_of_me = Some((parent + delta) as u32);
            }
            size = size - rightsize - 1;
            delta += rightsize;
            myrank -= rightsize;
            parent = size - 1;
        } else {
            if myrank == rchild {
                parent_of_me = Some((parent + delta) as u32);
            }
            size = rightsize;
            parent = rchild;
        }
    }
    Tree {
        parent: parent_of_me,
        children,
    }
}

/// `chains` chains hanging off the root (build_chain); chain lengths differ by at most one,
/// the longer ones first. chains = 0 is forced to 1 (a pipeline), as Open MPI does.
pub fn chain(p: u32, root: u32, me: u32, chains: u32) -> Tree {
    let n = p - 1;
    let chains = chains.max(1).min(n.max(1));
    let s = vrank(me, root, p);
    // chain c covers shifted ranks start(c) .. start(c) + len(c) - 1
    let base = n / chains;
    let extra = n % chains;
    let len = |c: u32| base + u32::from(c < extra);
    let start = |c: u32| 1 + c * base + c.min(extra);
    if s == 0 {
        let children = (0..chains)
            .filter(|&c| len(c) > 0)
            .map(|c| real(start(c), root, p));
        return Tree {
            parent: None,
            children: children.collect(),
        };
    }
    let c = (0..chains)
        .find(|&c| s >= start(c) && s < start(c) + len(c))
        .unwrap_or(0);
    let parent = if s == start(c) { 0 } else { s - 1 };
    let children = if s + 1 < start(c) + len(c) {
        vec![real(s + 1, root, p)]
    } else {
        Vec::new()
    };
    Tree {
        parent: Some(real(parent, root, p)),
        children,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_tree(p: u32, f: impl Fn(u32) -> Tree) {
        let trees: Vec<Tree> = (0..p).map(&f).collect();
        let roots = trees.iter().filter(|t| t.parent.is_none()).count();
        assert_eq!(roots, 1, "exactly one root");
        for (r, t) in trees.iter().enumerate() {
            for &c in &t.children {
                assert_eq!(
                    trees[c as usize].parent,
                    Some(r as u32),
                    "p={p} child {c} of {r}"
                );
            }
            if let Some(par) = t.parent {
                assert!(trees[par as usize].children.contains(&(r as u32)));
            }
        }
    }

    #[test]
    fn all_trees_are_consistent() {
        for p in 2..40 {
            for root in [0, p / 2, p - 1] {
                check_tree(p, |m| bmtree(p, root, m));
                check_tree(p, |m| in_order_bmtree(p, root, m));
                check_tree(p, |m| kmtree(p, root, m, 4));
                check_tree(p, |m| ntree(p, root, m, 2));
                check_tree(p, |m| chain(p, root, m, 1));
                check_tree(p, |m| chain(p, root, m, 4));
            }
            check_tree(p, |m| in_order_bintree(p, m));
        }
    }

    #[test]
    fn knomial_matches_open_mpi_example() {
        assert_eq!(kmtree(10, 0, 0, 4).children, vec![4, 8, 1, 2, 3]);
        assert_eq!(kmtree(10, 0, 4, 4).children, vec![5, 6, 7]);
        assert_eq!(bmtree(16, 0, 0).children, vec![1, 2, 4, 8]);
        assert_eq!(ntree(16, 0, 1, 2).children, vec![3, 5]);
        assert_eq!(ntree(16, 0, 3, 2).parent, Some(1));
    }
}
