//! Flow sharing: every transfer is a flow whose rate is its max-min fair share of the links
//! it crosses (network.rs, solved locally in maxmin/), over the classic topologies of
//! graphs/ (crossbar, k-ary n-tree, 3-D torus). Models `flow` and `tree` are this alone;
//! `dragonfly_plus` runs it on the Dragonfly+ of dragonfly/, `photonic_hybrid` for its
//! electrical torus, and `photonic_segment` takes its topologies from graphs/.

pub mod graphs;
pub mod maxmin;
pub mod network;
