//! The file's top-level fields as the columns a trace has: each a flat primitive column or
//! a list of primitives (the three-level LIST layout pyarrow, polars and DuckDB write),
//! with the levels that say where its nulls and list boundaries are.

use parquet::basic::{ConvertedType, LogicalType, Repetition, Type as Physical};
use parquet::schema::types::{ColumnDescPtr, SchemaDescriptor, Type};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One value per row; `def == max_def` is a value, anything less a null.
    Flat,
    /// A list per row: `def < list_def` null list, `def == list_def` an empty list,
    /// `list_def < def < max_def` a null element, `def == max_def` an element.
    List { list_def: i16 },
}

/// How a leaf's values are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// INT32 (`unsigned`: annotated UINT_32, whose values above 2^31 are stored negative).
    Int32 {
        unsigned: bool,
    },
    Int64,
    /// BYTE_ARRAY: strings.
    Bytes,
}

/// The leaf (primitive) column of a top-level field.
#[derive(Clone, Debug)]
pub struct Leaf {
    /// The top-level field's name.
    pub name: String,
    pub descr: ColumnDescPtr,
    /// Index of this leaf among all leaves (= the column chunk's index in a row group).
    pub index: usize,
    /// What this reader decodes of the field, or why it does not.
    pub read_as: Result<(Kind, Shape), String>,
}

impl Leaf {
    pub fn max_def(&self) -> i16 {
        self.descr.max_def_level()
    }
}

pub struct Schema {
    /// The first leaf of each top-level field, in order.
    pub fields: Vec<Leaf>,
}

fn kind(descr: &ColumnDescPtr) -> Result<Kind, String> {
    let unsigned = match descr.logical_type_ref() {
        Some(LogicalType::Integer(int)) => !int.is_signed,
        _ => matches!(
            descr.converted_type(),
            ConvertedType::UINT_8 | ConvertedType::UINT_16 | ConvertedType::UINT_32
        ),
    };
    match descr.physical_type() {
        Physical::INT32 => Ok(Kind::Int32 { unsigned }),
        Physical::INT64 => Ok(Kind::Int64),
        Physical::BYTE_ARRAY => Ok(Kind::Bytes),
        other => Err(format!("of type {other}")),
    }
}

/// The shape of top-level field `field` whose first leaf is `descr`.
fn shape(field: &Type, descr: &ColumnDescPtr) -> Result<Shape, String> {
    let repeated = |t: &Type| t.get_basic_info().repetition() == Repetition::REPEATED;
    if field.is_primitive() {
        return if repeated(field) {
            Err("a repeated primitive".into())
        } else {
            Ok(Shape::Flat)
        };
    }
    // group (not repeated) -> repeated group -> one primitive
    let [middle] = field.get_fields() else {
        return Err("a nested type other than a list".into());
    };
    match middle.get_fields() {
        [item] if !repeated(field) && repeated(middle) && item.is_primitive() => {
            let list_def = i16::from(field.get_basic_info().repetition() == Repetition::OPTIONAL);
            Ok(Shape::List { list_def })
        }
        _ if descr.max_rep_level() > 1 => Err("a list of lists".into()),
        _ => Err("a nested type other than a list".into()),
    }
}

impl Schema {
    pub fn new(descr: &SchemaDescriptor) -> Self {
        let mut fields: Vec<Leaf> = Vec::new();
        for index in 0..descr.num_columns() {
            let root = descr.get_column_root_idx(index);
            if root < fields.len() {
                continue; // a later leaf of the same field
            }
            let field = descr.get_column_root(index);
            let column = descr.column(index);
            let read_as = kind(&column)
                .and_then(|k| shape(field, &column).map(|s| (k, s)))
                .map_err(|why| format!("column {} is {why}", field.name()));
            fields.push(Leaf {
                name: field.name().to_string(),
                descr: column,
                index,
                read_as,
            });
        }
        Self { fields }
    }

    /// The first leaf of top-level field `name`.
    pub fn leaf(&self, name: &str) -> Option<&Leaf> {
        self.fields.iter().find(|l| l.name == name)
    }

    /// Top-level field names in order.
    pub fn names(&self) -> Vec<&str> {
        self.fields.iter().map(|l| l.name.as_str()).collect()
    }
}
