//! The packet engine's parameters, declared once for every topology model that offers it:
//! the `contention` key that selects it and the `[packet]` table (MTU, virtual channels,
//! buffers, credit delay, switching). What a hop costs besides (cable latency, router
//! delay, link rates) stays the topology model's own keys, so a zero-load packet and a
//! zero-load flow see the same numbers.

use crate::fabric::schema::{Config, ConfigError, DefaultValue, Param, Type};

/// The key that picks the contention model of a topology fabric.
pub const CONTENTION: Param = Param {
    key: "contention",
    ty: Type::Choice(&["flow", "packet"]),
    default: DefaultValue::Str("flow"),
    doc: "flow: max-min fair flows (no queues); packet: packets through finite credit-controlled buffers ([packet] table)",
};

const PACKET_BYTES: Param = Param {
    key: "packet_bytes",
    ty: Type::Int {
        min: 1,
        max: 1 << 24,
    },
    default: DefaultValue::Int(1024),
    doc: "packet (MTU) size a message is cut into (CODES dfp-test packet_size = chunk_size = 1024; InfiniBand MTUs go up to 4096)",
};

const VIRTUAL_CHANNELS: Param = Param {
    key: "virtual_channels",
    ty: Type::Int { min: 1, max: 16 },
    default: DefaultValue::Int(2),
    doc: "virtual channels per port (CODES dragonfly-plus num_vcs = 2); at least what the topology's deadlock rule needs (torus, Dragonfly+: 2), extra ones split traffic by destination",
};

const BUFFER_BYTES: Param = Param {
    key: "buffer_bytes",
    ty: Type::Int {
        min: 1,
        max: 1 << 30,
    },
    default: DefaultValue::Int(8192),
    doc: "input buffer per port and virtual channel (CODES dfp-test local_vc_size = cn_vc_size = 8192); at least one packet",
};

const CREDIT_DELAY: Param = Param {
    key: "credit_delay_ns",
    ty: Type::Float {
        min: 0.0,
        max: f64::INFINITY,
    },
    default: DefaultValue::Absent,
    doc: "time for a freed buffer's credit to reach the sender (default: CODES' rule, an 8-byte credit serialised on the link, plus the link's cable latency)",
};

const SWITCHING: Param = Param {
    key: "switching",
    ty: Type::Choice(&["cut_through", "store_and_forward"]),
    default: DefaultValue::Str("cut_through"),
    doc: "cut_through: a router forwards a packet's head as it arrives (InfiniBand switches); store_and_forward: only once its tail is in",
};

const BACKGROUND: Param = Param {
    key: "background",
    ty: Type::Choice(&["explicit", "virtual"]),
    default: DefaultValue::Str("explicit"),
    doc: "explicit: background jobs' messages are packets too; virtual: only the traces' packets are, and each port carries the background's mean load as a virtual queue they wait behind (virtual_queues.rs; background traces stay explicit)",
};

/// The parameters of the `[packet]` table.
pub const PACKET: &[Param] = &[
    PACKET_BYTES,
    VIRTUAL_CHANNELS,
    BUFFER_BYTES,
    CREDIT_DELAY,
    SWITCHING,
    BACKGROUND,
];

/// The `[packet]` table every topology fabric may carry.
pub const TABLE: Param = Param {
    key: "packet",
    ty: Type::Table(PACKET),
    default: DefaultValue::Empty,
    doc: "the packet engine's parameters when contention = \"packet\" (packet.* below)",
};

/// The `[packet]` table of a model that fixes the packet size and switching itself
/// (dragonfly_plus: CODES' chunk, stored and forwarded at every router).
pub const TABLE_OF_BUFFERS: Param = Param {
    key: "packet",
    ty: Type::Table(&[VIRTUAL_CHANNELS, BUFFER_BYTES, CREDIT_DELAY, BACKGROUND]),
    default: DefaultValue::Empty,
    doc: "the packet engine's buffers when contention = \"packet\" (packet.* below)",
};

/// Bytes of a credit message (CODES dragonfly-plus `CREDIT_SIZE`).
pub const CREDIT_BYTES: f64 = 8.0;

/// How a router forwards a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switching {
    CutThrough,
    StoreAndForward,
}

/// How background jobs (synthetic generators, those sized from b) cross the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackgroundMode {
    /// Their messages are packets like the traces'.
    Explicit,
    /// Virtual queues per port (virtual_queues.rs).
    Virtual,
}

/// The packet engine's parameters of one fabric file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PacketParams {
    pub packet_bytes: u32,
    pub virtual_channels: u8,
    pub buffer_bytes: u32,
    /// None: CODES' rule per link (see `credit_delay_ns`).
    pub credit_delay_ns: Option<f64>,
    pub switching: Switching,
    pub background: BackgroundMode,
}

impl PacketParams {
    /// The packet engine's parameters if the configuration selects it (`contention =
    /// "packet"`) from its `[packet]` table (`TABLE`); None for flow contention.
    pub fn of(config: &Config) -> Result<Option<Self>, ConfigError> {
        let t = config.table(TABLE.key);
        let switching = match t.str("switching") {
            "store_and_forward" => Switching::StoreAndForward,
            _ => Switching::CutThrough,
        };
        Self::with_format(config, t.u32("packet_bytes"), switching)
    }

    /// As `of`, for a model with the `TABLE_OF_BUFFERS` table, which gives the packet size
    /// and the switching.
    pub fn with_format(
        config: &Config,
        packet_bytes: u32,
        switching: Switching,
    ) -> Result<Option<Self>, ConfigError> {
        if config.str(CONTENTION.key) != "packet" {
            return Ok(None);
        }
        let t = config.table(TABLE.key);
        let p = Self {
            packet_bytes,
            virtual_channels: t.u32("virtual_channels") as u8,
            buffer_bytes: t.u32("buffer_bytes"),
            credit_delay_ns: t.has("credit_delay_ns").then(|| t.f64("credit_delay_ns")),
            switching,
            background: match t.str(BACKGROUND.key) {
                "virtual" => BackgroundMode::Virtual,
                _ => BackgroundMode::Explicit,
            },
        };
        if p.buffer_bytes < p.packet_bytes {
            return Err(ConfigError {
                key: "packet.buffer_bytes".into(),
                message: format!("must hold at least one packet ({} bytes)", p.packet_bytes),
            });
        }
        Ok(Some(p))
    }
}
