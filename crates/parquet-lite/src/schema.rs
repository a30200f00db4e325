//! The flattened schema as columns: each top-level field is a flat primitive column or a
//! list of primitives (the three-level LIST layout pyarrow writes), with the definition and
//! repetition levels that say where its nulls and list boundaries are.

use crate::error::{corrupt, Error, Result};
use crate::metadata::{Physical, Repetition, SchemaNode};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One value per row; `def == max_def` is a value, anything less a null.
    Flat,
    /// A list per row: `def < list_def` null list, `def == list_def` an empty list,
    /// `list_def < def < max_def` a null element, `def == max_def` an element.
    List { list_def: i16 },
}

/// One leaf (primitive) column.
#[derive(Clone, Debug)]
pub struct Leaf {
    /// The top-level field's name.
    pub name: String,
    /// Index of this leaf among all leaves (= the column chunk's index in a row group).
    pub index: usize,
    pub physical: Physical,
    /// Declared integer width in bits and signedness, when annotated.
    pub int_type: Option<(u8, bool)>,
    pub max_def: i16,
    pub max_rep: i16,
    /// None when the field is a shape this reader does not decode (its error says why).
    pub shape: std::result::Result<Shape, String>,
}

pub struct Schema {
    pub leaves: Vec<Leaf>,
}

fn levels(node: &SchemaNode, def: &mut i16, rep: &mut i16) {
    match node.repetition {
        Repetition::Required => {}
        Repetition::Optional => *def += 1,
        Repetition::Repeated => {
            *def += 1;
            *rep += 1;
        }
    }
}

impl Schema {
    /// Walks the flattened tree (depth-first, `children` counts) of a footer.
    pub fn new(nodes: &[SchemaNode]) -> Result<Self> {
        let root = nodes
            .first()
            .ok_or_else(|| Error::Corrupt("empty schema".into()))?;
        let mut leaves = Vec::new();
        let mut at = 1;
        for _ in 0..root.children {
            at = Self::field(nodes, at, &mut leaves)?;
        }
        if at != nodes.len() {
            return corrupt("schema element counts do not add up");
        }
        Ok(Self { leaves })
    }

    /// Reads the top-level field at `nodes[at]`; returns the index after its subtree.
    fn field(nodes: &[SchemaNode], at: usize, leaves: &mut Vec<Leaf>) -> Result<usize> {
        let top = nodes
            .get(at)
            .ok_or_else(|| Error::Corrupt("schema ends early".into()))?;
        let (mut def, mut rep) = (0i16, 0i16);
        levels(top, &mut def, &mut rep);
        if top.children == 0 {
            let physical = top
                .physical
                .ok_or_else(|| Error::Corrupt(format!("column {} has no type", top.name)))?;
            let shape = if rep > 0 {
                Err(format!("column {} is a repeated primitive", top.name))
            } else {
                Ok(Shape::Flat)
            };
            leaves.push(Leaf {
                name: top.name.clone(),
                index: leaves.len(),
                physical,
                int_type: top.int_type,
                max_def: def,
                max_rep: rep,
                shape,
            });
            return Ok(at + 1);
        }
        // A group: the three-level list is group → repeated group → one primitive.
        let list_def = def;
        let mut path_leaves = Vec::new();
        let end = Self::subtree(nodes, at, def, rep, &mut path_leaves)?;
        let three_level = top.children == 1
            && nodes[at + 1].repetition == Repetition::Repeated
            && nodes[at + 1].children == 1
            && nodes[at + 2].children == 0
            && top.repetition != Repetition::Repeated;
        for (i, (node_at, def, rep)) in path_leaves.into_iter().enumerate() {
            let node = &nodes[node_at];
            let shape = if three_level && i == 0 {
                Ok(Shape::List { list_def })
            } else {
                Err(format!(
                    "column {} is a nested type other than a list",
                    top.name
                ))
            };
            leaves.push(Leaf {
                name: top.name.clone(),
                index: leaves.len(),
                physical: node
                    .physical
                    .ok_or_else(|| Error::Corrupt(format!("leaf of {} has no type", top.name)))?,
                int_type: node.int_type,
                max_def: def,
                max_rep: rep,
                shape,
            });
        }
        Ok(end)
    }

    /// The leaves under the group at `nodes[at]` (whose own levels are `def`, `rep`):
    /// (node index, max def, max rep) each; returns the index after the subtree.
    fn subtree(
        nodes: &[SchemaNode],
        at: usize,
        def: i16,
        rep: i16,
        out: &mut Vec<(usize, i16, i16)>,
    ) -> Result<usize> {
        let group = &nodes[at];
        let mut next = at + 1;
        for _ in 0..group.children {
            let node = nodes
                .get(next)
                .ok_or_else(|| Error::Corrupt("schema ends early".into()))?;
            let (mut d, mut r) = (def, rep);
            levels(node, &mut d, &mut r);
            if node.children == 0 {
                out.push((next, d, r));
                next += 1;
            } else {
                next = Self::subtree(nodes, next, d, r, out)?;
            }
        }
        Ok(next)
    }

    /// The first leaf of top-level field `name`.
    pub fn leaf(&self, name: &str) -> Option<&Leaf> {
        self.leaves.iter().find(|l| l.name == name)
    }

    /// Top-level field names in order.
    pub fn names(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for leaf in &self.leaves {
            if out.last() != Some(&leaf.name.as_str()) {
                out.push(&leaf.name);
            }
        }
        out
    }
}
