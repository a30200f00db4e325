//! A unidirectional k-ary butterfly (seed 004 §III-C, Fig. 6): `stages` stages of
//! radix-k switches, k^stages ports, exactly one path per (source, destination) pair,
//! destination-tag routing. Links are numbered per level: level 0 the source ports, levels
//! 1..stages-1 between stages, level `stages` the destination ports.

/// A k-ary butterfly of `stages` stages, `radix^stages` ports.
#[derive(Debug, Clone, Copy)]
pub struct Butterfly {
    radix: u32,
    stages: u32,
    ports: u32,
}

impl Butterfly {
    /// The fewest stages of `radix`-port switches that give at least `endpoints` ports.
    pub fn covering(radix: u32, endpoints: u32) -> Self {
        let (mut stages, mut ports) = (1u32, radix);
        while ports < endpoints {
            stages += 1;
            ports = ports.saturating_mul(radix);
        }
        Self {
            radix,
            stages,
            ports,
        }
    }

    pub fn stages(&self) -> u32 {
        self.stages
    }

    pub fn ports(&self) -> u32 {
        self.ports
    }

    /// Links of one path: source port, the stages-1 inter-stage links, destination port.
    pub fn path_links(&self) -> u32 {
        self.stages + 1
    }

    pub fn links(&self) -> u32 {
        self.path_links() * self.ports
    }

    /// Link `level` (0..=stages) of the path `src` → `dst`: stage l replaces the l-th most
    /// significant base-`radix` digit of the row by the destination's (destination-tag
    /// routing), so after l stages the row is dst's top l digits and src's low ones.
    pub fn link(&self, src: u32, dst: u32, level: u32) -> u32 {
        let low = self.radix.pow(self.stages - level);
        let row = dst / low * low + src % low;
        level * self.ports + row
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_unique_and_meet_only_where_routes_share_digits() {
        // 4-ary, 3 stages: 64 ports, 4 links per path.
        let b = Butterfly::covering(4, 64);
        assert_eq!((b.stages(), b.ports(), b.links()), (3, 64, 256));
        // Level 0 is the source port, the last level the destination port.
        assert_eq!(b.link(5, 42, 0), 5);
        assert_eq!(b.link(5, 42, 3), 3 * 64 + 42);
        // After one stage the row has dst's top digit (42 = 2·16 + 10) and src's low ones.
        assert_eq!(b.link(5, 42, 1), 64 + 2 * 16 + 5);
        // Two sources with the same low digits into destinations with the same top digit
        // share the first inter-stage link: the butterfly blocks.
        assert_eq!(b.link(5, 42, 1), b.link(5 + 16, 40, 1));
        assert_eq!(Butterfly::covering(4, 1000).stages(), 5);
    }
}
