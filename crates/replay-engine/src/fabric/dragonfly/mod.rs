//! Dragonfly+ (Shpiner et al., HiPINEB 2017) as CODES' dragonfly-plus model builds it, for
//! model `dragonfly_plus`: the wiring arithmetic (wiring.rs) and the route choices
//! (routing.rs); its flows share links on the flow network (flow/).

pub mod routing;
pub mod wiring;
