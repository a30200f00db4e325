//! Property tests: random squeue-like documents (random field types, junk members, nested
//! values, whitespace and escapes) scan to exactly what the reference walk
//! (tests/reference) computes; randomly mangled copies are accepted or rejected exactly
//! when the reference parser accepts or rejects them.

mod reference;

use queue_scan::scan;
use reference::{expected, parse};

/// xorshift64*: small, seeded, good enough to pick shapes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const CHARS: &[char] = &[
    'a', 'b', 'N', 'z', '0', '7', ' ', '-', '[', ']', ',', '"', '\\', '/', '\n', '\t', '\u{1}',
    '\u{1f}', 'é', '€', '😀', 'ß', '\u{7f}', ':', '{',
];
const WS: &[&str] = &["", "", " ", "\n", "\n  ", "\t", "\r\n", "\n          "];
const FIELDS: &[&str] = &[
    "job_id",
    "array_job_id",
    "array_task_id",
    "job_state",
    "nodes",
    "node_count",
    "user_name",
    "user_id",
    "cluster",
];

/// Writes JSON text with random whitespace and random (valid) escapes.
struct Writer<'r> {
    rng: &'r mut Rng,
    out: String,
}

impl Writer<'_> {
    fn ws(&mut self) {
        let w = *self.rng.pick(WS);
        self.out.push_str(w);
    }

    fn string(&mut self, s: &str) {
        self.out.push('"');
        for c in s.chars() {
            let must = c == '"' || c == '\\' || (c as u32) < 0x20;
            if must || self.rng.chance(8) {
                match (c, self.rng.below(3)) {
                    ('"', 0) => self.out.push_str("\\\""),
                    ('\\', 0) => self.out.push_str("\\\\"),
                    ('/', _) => self.out.push_str("\\/"),
                    ('\n', 0) => self.out.push_str("\\n"),
                    ('\t', 0) => self.out.push_str("\\t"),
                    _ => {
                        let mut units = [0u16; 2];
                        for u in c.encode_utf16(&mut units) {
                            let hex = format!("\\u{:04x}", u);
                            let hex = if self.rng.chance(50) {
                                hex.to_uppercase().replace("\\U", "\\u")
                            } else {
                                hex
                            };
                            self.out.push_str(&hex);
                        }
                    }
                }
            } else {
                self.out.push(c);
            }
        }
        self.out.push('"');
    }

    fn random_string(&mut self) -> String {
        let n = if self.rng.chance(20) {
            20 + self.rng.below(30)
        } else {
            self.rng.below(6)
        };
        (0..n).map(|_| *self.rng.pick(CHARS)).collect()
    }

    fn number(&mut self) {
        let n = match self.rng.below(8) {
            0 => "0".to_string(),
            1 => format!("-{}", self.rng.below(1000)),
            2 => format!("{}.{}", self.rng.below(100), self.rng.below(100)),
            3 => format!("{}e{}", 1 + self.rng.below(9), self.rng.below(5)),
            4 => "-0.0".to_string(),
            5 => format!("{}", self.rng.next() >> 1),
            6 => format!("{}E-2", self.rng.below(50)),
            _ => format!("{}", self.rng.below(100_000)),
        };
        self.out.push_str(&n);
    }

    /// Any value; `depth` bounds nesting.
    fn value(&mut self, depth: usize) {
        match self.rng.below(if depth == 0 { 5 } else { 8 }) {
            0 => {
                let word = *self.rng.pick(&["null", "true", "false"]);
                self.out.push_str(word)
            }
            1 | 2 => self.number(),
            3 | 4 => {
                let s = self.random_string();
                self.string(&s);
            }
            5 => self.array(depth - 1, |w, d| w.value(d)),
            _ => {
                let n = self.rng.below(4);
                self.object((0..n).map(|_| None).collect(), depth - 1);
            }
        }
    }

    fn array(&mut self, depth: usize, mut item: impl FnMut(&mut Self, usize)) {
        self.out.push('[');
        let n = self.rng.below(4);
        for i in 0..n {
            if i > 0 {
                self.out.push(',');
            }
            self.ws();
            item(self, depth);
            self.ws();
        }
        self.ws();
        self.out.push(']');
    }

    /// An object whose members are `keys` (None: a random junk key with a random value).
    fn object(&mut self, keys: Vec<Option<&str>>, depth: usize) {
        self.out.push('{');
        for (i, key) in keys.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.ws();
            match key {
                Some(k) => {
                    self.string(k);
                    self.ws();
                    self.out.push(':');
                    self.ws();
                    self.field(k, depth);
                }
                None => {
                    let k = self.random_string();
                    self.string(&k);
                    self.out.push(':');
                    self.ws();
                    self.value(depth);
                }
            }
            self.ws();
        }
        self.out.push('}');
    }

    /// A value for a known field: mostly the shapes Slurm uses, sometimes anything.
    fn field(&mut self, key: &str, depth: usize) {
        if self.rng.chance(15) {
            return self.value(depth.min(2));
        }
        match key {
            "job_state" if self.rng.chance(50) => self.array(0, |w, _| {
                let s = *w.rng.pick(&["running", "PENDING", "ß", "", "Completing"]);
                w.string(s)
            }),
            "job_state" | "nodes" | "user_name" | "cluster" | "release" => {
                let s = match self.rng.below(3) {
                    0 => self.random_string(),
                    1 => String::new(),
                    _ => format!(
                        "node[{:02}-{:02}]",
                        self.rng.below(50),
                        50 + self.rng.below(50)
                    ),
                };
                self.string(&s)
            }
            _ if self.rng.chance(40) => {
                let keys = ["set", "infinite", "number", "x"];
                let n = self.rng.below(5);
                let chosen: Vec<Option<&str>> =
                    (0..n).map(|_| Some(*self.rng.pick(&keys))).collect();
                self.object(chosen, 0);
            }
            "set" | "infinite" => {
                let word = *self.rng.pick(&["true", "false", "null", "1", "0"]);
                self.out.push_str(word)
            }
            _ if self.rng.chance(15) => {
                let s = format!(" {} ", self.rng.below(1000));
                self.string(&s)
            }
            _ => self.out.push_str(&self.rng.below(1_000_000).to_string()),
        }
    }

    fn job(&mut self) {
        if self.rng.chance(3) {
            return self.value(1);
        }
        let mut keys: Vec<Option<&str>> = Vec::new();
        for f in FIELDS {
            if self.rng.chance(85) {
                keys.push(Some(f));
            }
            if self.rng.chance(5) {
                keys.push(Some(f)); // duplicate: the last wins
            }
        }
        for _ in 0..self.rng.below(6) {
            keys.push(None);
        }
        for i in (1..keys.len()).rev() {
            keys.swap(i, self.rng.below(i + 1));
        }
        self.object(keys, 3);
    }

    fn document(&mut self) {
        self.ws();
        self.out.push('{');
        let mut members = ["jobs", "meta", "errors", "junk"];
        for i in (1..members.len()).rev() {
            members.swap(i, self.rng.below(i + 1));
        }
        for (i, m) in members.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.ws();
            self.string(m);
            self.out.push(':');
            self.ws();
            match *m {
                "jobs" => self.array(0, |w, _| w.job()),
                "meta" if self.rng.chance(80) => {
                    let spelling = *self.rng.pick(&["Slurm", "slurm"]);
                    let inner = vec![Some("release"), Some("cluster"), None];
                    self.out.push('{');
                    self.string(spelling);
                    self.out.push(':');
                    if self.rng.chance(80) {
                        self.object(inner, 1);
                    } else {
                        self.value(1);
                    }
                    self.out.push('}');
                }
                "errors" if self.rng.chance(70) => self.out.push_str("[]"),
                _ => self.value(3),
            }
        }
        self.ws();
        self.out.push('}');
        self.ws();
    }
}

fn random_doc(rng: &mut Rng) -> String {
    let mut w = Writer {
        rng,
        out: String::new(),
    };
    w.document();
    w.out
}

/// `jobs` arrays of a few entries; `array` writes up to 3, so repeat the generator.
#[test]
fn random_documents_match_the_reference() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut problems = 0;
    for round in 0..3000 {
        let doc = random_doc(&mut rng);
        let tree =
            parse(doc.as_bytes()).unwrap_or_else(|()| panic!("generator wrote bad JSON: {doc}"));
        let want = expected(doc.as_bytes(), &tree).expect("generated docs have a jobs list");
        let got = scan(doc.as_bytes()).unwrap_or_else(|e| panic!("round {round}: {e}\n{doc}"));
        assert_eq!(got, want, "round {round}\n{doc}");
        problems += got.problems.len();
    }
    assert!(
        problems > 100,
        "the generator should produce bad entries too ({problems})"
    );
}

#[test]
fn mangled_documents_are_rejected_exactly_when_the_reference_rejects_them() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let bytes = b"{}[],:\"\\ 0-.eEtfnu+\x01a/";
    let (mut accepted, mut rejected) = (0, 0);
    for round in 0..6000 {
        let mut doc = random_doc(&mut rng).into_bytes();
        for _ in 0..1 + rng.below(2) {
            let ascii: Vec<usize> = (0..doc.len()).filter(|&i| doc[i].is_ascii()).collect();
            let at = *rng.pick(&ascii);
            match rng.below(3) {
                0 => doc[at] = *rng.pick(bytes),
                1 => {
                    doc.remove(at);
                }
                _ => doc.insert(at, *rng.pick(bytes)),
            }
        }
        let want = parse(&doc).and_then(|tree| expected(&doc, &tree));
        let got = scan(&doc);
        let text = String::from_utf8_lossy(&doc);
        match (got, want) {
            (Ok(g), Ok(w)) => {
                assert_eq!(g, w, "round {round}\n{text}");
                accepted += 1;
            }
            (Err(_), Err(())) => rejected += 1,
            (g, w) => panic!("round {round}: scan {g:?}, reference {w:?}\n{text}"),
        }
    }
    assert!(
        accepted > 500 && rejected > 2000,
        "{accepted} accepted, {rejected} rejected"
    );
}
