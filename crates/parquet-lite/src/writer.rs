//! Writes Parquet files of integer, string and integer-list columns (what traces hold), a
//! row group at a time: dictionary (strings, and integers with few distinct values) or
//! DELTA_BINARY_PACKED integers, PLAIN when a dictionary grows too large; data pages v1 of
//! at most `page_rows` rows; zstd (chunks too small to gain from it uncompressed) or
//! uncompressed; statistics; logical integer widths.
//! pyarrow and DuckDB read the files (tests check both). The chunks' encoding is
//! column_write.rs's; this places them in the file and writes the footer.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::column_write::{ChunkEncoder, ChunkMeta};
use crate::error::{Error, Result};
use crate::spec::{physical, same_kind, ColumnData, ColumnSpec, ValueKind, WriteOptions};
use crate::thrift_write::{element, Struct, BINARY, I32, STRUCT};

struct GroupMeta {
    rows: i64,
    offset: i64,
    chunks: Vec<ChunkMeta>,
}

pub struct Writer {
    out: BufWriter<File>,
    pos: u64,
    specs: Vec<ColumnSpec>,
    groups: Vec<GroupMeta>,
    key_value: Vec<(String, String)>,
    encoder: ChunkEncoder,
    /// The bytes of the last chunk encoded (reused from chunk to chunk).
    chunk: Vec<u8>,
}

impl Writer {
    pub fn create(path: &Path, specs: Vec<ColumnSpec>, options: WriteOptions) -> Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
        out.write_all(b"PAR1")?;
        Ok(Self {
            out,
            pos: 4,
            specs,
            groups: Vec::new(),
            key_value: Vec::new(),
            encoder: ChunkEncoder::new(options),
            chunk: Vec::new(),
        })
    }

    /// Key-value metadata of the footer (a later value of a key replaces an earlier one).
    pub fn set_key_value(&mut self, key: &str, value: &str) {
        self.key_value.retain(|(k, _)| k != key);
        self.key_value.push((key.to_string(), value.to_string()));
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<()> {
        self.out.write_all(bytes)?;
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Appends a row group of `rows` rows (one `ColumnData` per column, in schema order).
    pub fn write_row_group(&mut self, rows: usize, columns: &[ColumnData<'_>]) -> Result<()> {
        if columns.len() != self.specs.len() {
            return Err(Error::Unsupported(format!(
                "{} columns for a schema of {}",
                columns.len(),
                self.specs.len()
            )));
        }
        let offset = self.pos as i64;
        let mut chunks: Vec<ChunkMeta> = Vec::with_capacity(columns.len());
        // The metadata of the chunk in `self.chunk`, its offsets counted from its start.
        let mut encoded: Option<ChunkMeta> = None;
        for (k, (spec, data)) in self.specs.iter().zip(columns).enumerate() {
            // A column with the same data and type as the one before (a trace's end
            // times of calls that take no time) repeats its pages: the same bytes.
            let repeats = k > 0 && same_kind(&self.specs[k - 1], spec) && columns[k - 1].same(data);
            if !repeats || encoded.is_none() {
                encoded = Some(self.encoder.encode(spec, data, rows, &mut self.chunk)?);
            }
            chunks.push(encoded.as_ref().expect("encoded above").placed(self.pos));
            self.out.write_all(&self.chunk)?;
            self.pos += self.chunk.len() as u64;
        }
        self.groups.push(GroupMeta {
            rows: rows as i64,
            offset,
            chunks,
        });
        Ok(())
    }

    /// Writes the footer and closes the file.
    pub fn finish(mut self) -> Result<()> {
        let mut footer = Vec::new();
        let mut s = Struct::new(&mut footer);
        s.i32(1, 2);
        let schema = self.schema_elements();
        s.list(2, STRUCT, schema.len(), |out, i| {
            out.extend_from_slice(&schema[i])
        });
        s.i64(3, self.groups.iter().map(|g| g.rows).sum());
        let groups: Vec<Vec<u8>> = self.groups.iter().map(|g| self.group_bytes(g)).collect();
        s.list(4, STRUCT, groups.len(), |out, i| {
            out.extend_from_slice(&groups[i])
        });
        let kv = &self.key_value;
        s.list(5, STRUCT, kv.len(), |out, i| {
            element(out, |e| {
                e.binary(1, kv[i].0.as_bytes())
                    .binary(2, kv[i].1.as_bytes());
            })
        });
        s.binary(
            6,
            concat!("tailcast parquet-lite ", env!("CARGO_PKG_VERSION")).as_bytes(),
        );
        s.end();
        self.emit(&footer)?;
        let len = (footer.len() as u32).to_le_bytes();
        self.emit(&len)?;
        self.emit(b"PAR1")?;
        self.out.flush()?; // (durability is the caller's: it renames the file into place)
        Ok(())
    }

    /// The flattened schema (parquet.thrift SchemaElement), each element serialised.
    fn schema_elements(&self) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut root = Vec::new();
        element(&mut root, |e| {
            e.binary(4, b"schema").i32(5, self.specs.len() as i32);
        });
        out.push(root);
        for spec in &self.specs {
            let leaf = |e: &mut Struct<'_>, name: &[u8], repetition: i32| {
                e.i32(1, physical(spec.kind))
                    .i32(3, repetition)
                    .binary(4, name);
                match spec.kind {
                    ValueKind::String => {
                        e.i32(6, 0); // UTF8
                        e.structure(10, |l| {
                            l.structure(1, |_| {});
                        });
                    }
                    ValueKind::Int { bits } | ValueKind::IntList { bits } if bits < 32 => {
                        e.i32(6, if bits <= 8 { 15 } else { 16 }); // INT_8 / INT_16
                        e.structure(10, |l| {
                            l.structure(10, |t| {
                                t.byte(1, if bits <= 8 { 8 } else { 16 }).boolean(2, true);
                            });
                        });
                    }
                    _ => {}
                }
            };
            let optional = i32::from(spec.nullable);
            match spec.kind {
                ValueKind::IntList { .. } => {
                    let mut group = Vec::new();
                    element(&mut group, |e| {
                        e.i32(3, optional)
                            .binary(4, spec.name.as_bytes())
                            .i32(5, 1)
                            .i32(6, 3);
                        e.structure(10, |l| {
                            l.structure(3, |_| {});
                        });
                    });
                    out.push(group);
                    let mut repeated = Vec::new();
                    element(&mut repeated, |e| {
                        e.i32(3, 2).binary(4, b"list").i32(5, 1);
                    });
                    out.push(repeated);
                    let mut item = Vec::new();
                    element(&mut item, |e| leaf(e, b"element", 1));
                    out.push(item);
                }
                _ => {
                    let mut flat = Vec::new();
                    element(&mut flat, |e| leaf(e, spec.name.as_bytes(), optional));
                    out.push(flat);
                }
            }
        }
        out
    }

    fn group_bytes(&self, g: &GroupMeta) -> Vec<u8> {
        let mut out = Vec::new();
        element(&mut out, |e| {
            e.list(1, STRUCT, g.chunks.len(), |out, i| {
                let (c, spec) = (&g.chunks[i], &self.specs[i]);
                element(out, |cc| {
                    cc.i64(2, c.data_page_offset);
                    cc.structure(3, |m| {
                        m.i32(1, physical(spec.kind));
                        m.list(2, I32, c.encodings.len(), |o, k| {
                            crate::thrift_write::uleb(
                                o,
                                crate::thrift_write::zigzag(i64::from(c.encodings[k])),
                            );
                        });
                        let path: Vec<&[u8]> = match spec.kind {
                            ValueKind::IntList { .. } => {
                                vec![spec.name.as_bytes(), b"list", b"element"]
                            }
                            _ => vec![spec.name.as_bytes()],
                        };
                        m.list(3, BINARY, path.len(), |o, k| {
                            crate::thrift_write::uleb(o, path[k].len() as u64);
                            o.extend_from_slice(path[k]);
                        });
                        m.i32(4, if c.zstd { 6 } else { 0 });
                        m.i64(5, c.num_values)
                            .i64(6, c.uncompressed)
                            .i64(7, c.compressed);
                        m.i64(9, c.data_page_offset);
                        if let Some(d) = c.dictionary_page_offset {
                            m.i64(11, d);
                        }
                        m.structure(12, |st| {
                            st.i64(3, c.null_count);
                            if let Some((lo, hi)) = &c.min_max {
                                st.binary(5, hi).binary(6, lo);
                            }
                        });
                    });
                });
            });
            let uncompressed: i64 = g.chunks.iter().map(|c| c.uncompressed).sum();
            let compressed: i64 = g.chunks.iter().map(|c| c.compressed).sum();
            e.i64(2, uncompressed)
                .i64(3, g.rows)
                .i64(5, g.offset)
                .i64(6, compressed);
        });
        out
    }
}
