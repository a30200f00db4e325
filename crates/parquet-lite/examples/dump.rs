//! Prints each column's row count, null count and a checksum (a debugging aid):
//! cargo run --release -p parquet-lite --example dump -- FILE [ROWS_PER_READ]

use parquet_lite::{ParquetFile, Values};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let file = std::sync::Arc::new(ParquetFile::open(std::path::Path::new(&args[1]))?);
    let step: usize = args.get(2).map_or(Ok(1 << 14), |s| s.parse())?;
    println!(
        "{} rows, {} row groups",
        file.num_rows(),
        file.num_row_groups()
    );
    let t0 = std::time::Instant::now();
    for name in file.schema.names() {
        let Some(mut cursor) = (match file.cursor(name, 0, file.num_row_groups()) {
            Ok(c) => c,
            Err(err) => {
                println!("{name:<14} {err}");
                continue;
            }
        }) else {
            continue;
        };
        let (mut rows, mut nulls, mut sum) = (0usize, 0usize, 0i64);
        let mut list_values: Vec<i64> = Vec::new();
        loop {
            let col = cursor.read(step)?;
            if col.rows == 0 {
                break;
            }
            rows += col.rows;
            nulls += (0..col.rows).filter(|&i| !col.is_valid(i)).count();
            sum = match &col.values {
                Values::Ints(v) => v
                    .iter()
                    .fold(sum, |s, &x| s.wrapping_mul(31).wrapping_add(x)),
                Values::Strings(v) => v.iter().fold(sum, |s, &k| {
                    let text = &cursor.dictionary()[k as usize];
                    s.wrapping_mul(31).wrapping_add(text.len() as i64)
                }),
                Values::Lists { offsets, values } => {
                    list_values.extend_from_slice(values);
                    offsets
                        .windows(2)
                        .fold(sum, |s, w| s.wrapping_mul(31).wrapping_add(w[1] - w[0]))
                }
            };
        }
        let sum = list_values
            .iter()
            .fold(sum, |s, &x| s.wrapping_mul(31).wrapping_add(x));
        println!("{name:<14} rows {rows} nulls {nulls} checksum {sum}");
    }
    println!("{:?}", t0.elapsed());
    Ok(())
}
