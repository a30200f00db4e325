//! The file footer (parquet.thrift `FileMetaData`): schema, row groups, column chunks and
//! key-value metadata. Only the fields a reader of tailcast's files needs
//! are kept; the others are skipped.

use crate::error::{corrupt, Error, Result};
use crate::thrift::Reader;

/// Parquet physical types (parquet.thrift `Type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Physical {
    Boolean,
    Int32,
    Int64,
    Int96,
    Float,
    Double,
    ByteArray,
    FixedLenByteArray,
}

impl Physical {
    fn from_thrift(v: i32) -> Result<Self> {
        Ok(match v {
            0 => Self::Boolean,
            1 => Self::Int32,
            2 => Self::Int64,
            3 => Self::Int96,
            4 => Self::Float,
            5 => Self::Double,
            6 => Self::ByteArray,
            7 => Self::FixedLenByteArray,
            _ => return corrupt(format!("unknown physical type {v}")),
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repetition {
    Required,
    Optional,
    Repeated,
}

/// One node of the flattened schema tree (parquet.thrift `SchemaElement`).
#[derive(Clone, Debug)]
pub struct SchemaNode {
    pub name: String,
    pub physical: Option<Physical>,
    pub repetition: Repetition,
    pub children: usize,
    /// Integer width in bits and signedness when annotated (INT(8), UINT_16, …).
    pub int_type: Option<(u8, bool)>,
}

/// Compression codecs (parquet.thrift `CompressionCodec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    Uncompressed,
    Snappy,
    Gzip,
    Brotli,
    /// LZ4 as Hadoop frames it (old writers: a bare LZ4 block).
    Lz4Hadoop,
    Zstd,
    Lz4Raw,
    Other(i32),
}

#[derive(Clone, Debug)]
pub struct ColumnChunk {
    pub codec: Codec,
    pub num_values: i64,
    pub data_page_offset: i64,
    pub dictionary_page_offset: Option<i64>,
    pub total_compressed_size: i64,
}

impl ColumnChunk {
    /// Byte range of the chunk's pages in the file.
    pub fn byte_range(&self) -> Result<(u64, u64)> {
        let start = match self.dictionary_page_offset {
            Some(d) if d > 0 && d < self.data_page_offset => d,
            _ => self.data_page_offset,
        };
        if start < 0 || self.total_compressed_size < 0 {
            return corrupt("negative column chunk offset or size");
        }
        Ok((start as u64, self.total_compressed_size as u64))
    }
}

#[derive(Clone, Debug)]
pub struct RowGroup {
    pub num_rows: i64,
    /// One per leaf column, in schema order.
    pub columns: Vec<ColumnChunk>,
}

#[derive(Clone, Debug)]
pub struct FileMetaData {
    pub num_rows: i64,
    pub schema: Vec<SchemaNode>,
    pub row_groups: Vec<RowGroup>,
    pub key_value: Vec<(String, Option<String>)>,
}

fn schema_node(r: &mut Reader<'_>) -> Result<SchemaNode> {
    let mut node = SchemaNode {
        name: String::new(),
        physical: None,
        repetition: Repetition::Required,
        children: 0,
        int_type: None,
    };
    r.read_struct(|r, id, kind| {
        match id {
            1 => node.physical = Some(Physical::from_thrift(r.i32()?)?),
            3 => {
                node.repetition = match r.i32()? {
                    0 => Repetition::Required,
                    1 => Repetition::Optional,
                    2 => Repetition::Repeated,
                    v => return corrupt(format!("unknown repetition {v}")),
                }
            }
            4 => node.name = r.string()?,
            5 => node.children = usize::try_from(r.i32()?).unwrap_or(0),
            // ConvertedType INT_8..INT_64 = 15..18, UINT_8..UINT_64 = 11..14.
            6 => {
                node.int_type = match r.i32()? {
                    v @ 11..=14 => Some((8 << (v - 11), false)),
                    v @ 15..=18 => Some((8 << (v - 15), true)),
                    _ => node.int_type,
                }
            }
            10 => node.int_type = logical_int(r)?.or(node.int_type),
            _ => r.skip(kind)?,
        }
        Ok(())
    })?;
    Ok(node)
}

/// LogicalType union: field 10 is IntType { 1: i8 bitWidth, 2: bool isSigned }.
fn logical_int(r: &mut Reader<'_>) -> Result<Option<(u8, bool)>> {
    let mut found = None;
    r.read_struct(|r, id, kind| {
        if id != 10 {
            return r.skip(kind);
        }
        let (mut bits, mut signed) = (0u8, true);
        r.read_struct(|r, id, kind| {
            match id {
                1 => bits = r.byte()?, // a Thrift i8 is one raw byte
                2 => signed = Reader::bool_of(kind),
                _ => r.skip(kind)?,
            }
            Ok(())
        })?;
        found = Some((bits, signed));
        Ok(())
    })?;
    Ok(found)
}

fn column_meta(r: &mut Reader<'_>, chunk: &mut ColumnChunk) -> Result<()> {
    r.read_struct(|r, id, kind| {
        match id {
            4 => {
                chunk.codec = match r.i32()? {
                    0 => Codec::Uncompressed,
                    1 => Codec::Snappy,
                    2 => Codec::Gzip,
                    4 => Codec::Brotli,
                    5 => Codec::Lz4Hadoop,
                    6 => Codec::Zstd,
                    7 => Codec::Lz4Raw,
                    v => Codec::Other(v),
                }
            }
            5 => chunk.num_values = r.i64()?,
            7 => chunk.total_compressed_size = r.i64()?,
            9 => chunk.data_page_offset = r.i64()?,
            11 => chunk.dictionary_page_offset = Some(r.i64()?),
            _ => r.skip(kind)?,
        }
        Ok(())
    })
}

fn column_chunk(r: &mut Reader<'_>) -> Result<ColumnChunk> {
    let mut chunk = ColumnChunk {
        codec: Codec::Uncompressed,
        num_values: 0,
        data_page_offset: -1,
        dictionary_page_offset: None,
        total_compressed_size: -1,
    };
    let mut has_meta = false;
    r.read_struct(|r, id, kind| {
        match id {
            1 => return Err(Error::Unsupported("column chunks in other files".into())),
            3 => {
                column_meta(r, &mut chunk)?;
                has_meta = true;
            }
            _ => r.skip(kind)?,
        }
        Ok(())
    })?;
    if !has_meta {
        return Err(Error::Unsupported(
            "column chunk without metadata (encrypted?)".into(),
        ));
    }
    Ok(chunk)
}

fn row_group(r: &mut Reader<'_>) -> Result<RowGroup> {
    let mut group = RowGroup {
        num_rows: 0,
        columns: Vec::new(),
    };
    r.read_struct(|r, id, kind| {
        match id {
            1 => group.columns = r.read_list(column_chunk)?,
            3 => group.num_rows = r.i64()?,
            _ => r.skip(kind)?,
        }
        Ok(())
    })?;
    Ok(group)
}

fn key_value(r: &mut Reader<'_>) -> Result<(String, Option<String>)> {
    let (mut key, mut value) = (String::new(), None);
    r.read_struct(|r, id, kind| {
        match id {
            1 => key = r.string()?,
            2 => value = Some(r.string()?),
            _ => r.skip(kind)?,
        }
        Ok(())
    })?;
    Ok((key, value))
}

impl FileMetaData {
    /// Parses the Thrift-encoded footer.
    pub fn parse(data: &[u8]) -> Result<Self> {
        let mut r = Reader::new(data);
        let mut meta = FileMetaData {
            num_rows: 0,
            schema: Vec::new(),
            row_groups: Vec::new(),
            key_value: Vec::new(),
        };
        let mut encrypted = false;
        r.read_struct(|r, id, kind| {
            match id {
                2 => meta.schema = r.read_list(schema_node)?,
                3 => meta.num_rows = r.i64()?,
                4 => meta.row_groups = r.read_list(row_group)?,
                5 => meta.key_value = r.read_list(key_value)?,
                8 => {
                    encrypted = true;
                    r.skip(kind)?;
                }
                _ => r.skip(kind)?,
            }
            Ok(())
        })?;
        if encrypted {
            return Err(Error::Unsupported("encrypted file".into()));
        }
        if meta.schema.is_empty() {
            return corrupt("footer without a schema");
        }
        Ok(meta)
    }
}
