//! Malformed documents: every error is typed, located (byte offset, line, column), and
//! nothing panics on truncated or mangled input.

use queue_scan::{scan, Error, ErrorKind};

fn err(doc: &str) -> Error {
    match scan(doc.as_bytes()) {
        Ok(s) => panic!("accepted {doc:?}: {s:?}"),
        Err(e) => e,
    }
}

fn kind(doc: &str) -> ErrorKind {
    err(doc).kind
}

const GOOD: &str = "{\n  \"meta\": {\"Slurm\": {\"release\": \"22.05.8\"}},\n  \"jobs\": [\n    {\"job_id\": 1, \"nodes\": \"n\\/1\", \"x\": [true, false, null, -1.5e3, {}]},\n    {\"job_id\": 2, \"name\": \"a\\u00e9\\ud83d\\ude00\"}\n  ],\n  \"errors\": []\n}\n";

#[test]
fn the_good_document_scans() {
    assert_eq!(scan(GOOD.as_bytes()).unwrap().jobs.len(), 2);
}

#[test]
fn every_truncation_is_an_error_at_or_before_the_cut() {
    let end = GOOD.trim_end().len();
    for cut in 0..end {
        let doc = &GOOD[..cut];
        let e = err(doc);
        assert!(e.offset <= cut, "{cut}: {e}");
        let lines = 1 + doc[..e.offset].matches('\n').count();
        assert_eq!(e.line, lines, "{cut}: {e}");
        assert!(
            !e.kind.is_shape() || cut == 0 || e.kind == ErrorKind::NoJobs,
            "{cut}: {e}"
        );
    }
}

#[test]
fn truncation_inside_a_string_names_the_string_start() {
    let doc = "{\"jobs\": [\n {\"job_id\": 1,\n  \"name\": \"abcdefghijklmnopqrstuvwxyz";
    let e = err(doc);
    assert_eq!(e.kind, ErrorKind::UnterminatedString);
    assert_eq!((e.line, e.column), (3, 11));
    assert_eq!(e.offset, doc.find("\"abc").unwrap());
}

#[test]
fn bad_literals() {
    assert_eq!(kind(r#"{"jobs": [], "x": tru}"#), ErrorKind::BadLiteral);
    assert_eq!(kind(r#"{"jobs": [], "x": nul"#), ErrorKind::UnexpectedEnd);
    assert_eq!(
        kind(r#"{"jobs": [{"job_id": 1, "nodes": nil}]}"#),
        ErrorKind::BadLiteral
    );
    assert_eq!(
        kind(r#"{"jobs": [], "x": True}"#),
        ErrorKind::Expected {
            what: "a value",
            found: b'T'
        }
    );
    assert_eq!(
        kind(r#"{"jobs": [], "x": truex}"#),
        ErrorKind::Expected {
            what: "',' or '}'",
            found: b'x'
        }
    );
}

#[test]
fn bad_numbers() {
    for bad in ["01", "1.", "-", "1e", ".5", "+1", "1.5e+"] {
        let doc = format!(r#"{{"jobs": [{{"job_id": 1, "n": [{bad}]}}]}}"#);
        assert!(
            matches!(
                kind(&doc),
                ErrorKind::BadNumber | ErrorKind::Expected { .. }
            ),
            "{bad}"
        );
    }
    assert_eq!(kind(r#"{"jobs": [{"job_id": 01}]}"#), ErrorKind::BadNumber);
}

#[test]
fn string_errors() {
    assert_eq!(
        kind("{\"jobs\": [], \"x\": \"a\tb\"}"),
        ErrorKind::ControlInString(b'\t')
    );
    assert_eq!(
        kind(r#"{"jobs": [], "x": "a\qb"}"#),
        ErrorKind::BadEscape(b'q')
    );
    assert_eq!(
        kind(r#"{"jobs": [], "x": "\u12x4"}"#),
        ErrorKind::BadUnicodeEscape
    );
    assert_eq!(
        kind(r#"{"jobs": [], "x": "\udc00"}"#),
        ErrorKind::LoneSurrogate
    );
    assert_eq!(
        kind(r#"{"jobs": [], "x": "\ud800x"}"#),
        ErrorKind::LoneSurrogate
    );
    let doc = b"{\"jobs\": [{\"job_id\": 1, \"nodes\": \"n\xff\"}]}";
    assert_eq!(scan(doc).unwrap_err().kind, ErrorKind::InvalidUtf8);
}

#[test]
fn wrong_top_level_types_are_shape_errors() {
    for doc in ["[]", "[{\"jobs\": []}]", "\"jobs\"", "12", "null"] {
        let e = err(doc);
        assert_eq!(e.kind, ErrorKind::TopNotObject, "{doc}");
        assert!(e.to_string().contains("not squeue --json output"), "{e}");
    }
    assert_eq!(kind(r#"{"meta": {}}"#), ErrorKind::NoJobs);
    assert_eq!(kind(r#"{"jobs": {"a": 1}}"#), ErrorKind::JobsNotArray);
    assert_eq!(kind(r#"{"jobs": null}"#), ErrorKind::JobsNotArray);
    assert_eq!(kind(""), ErrorKind::UnexpectedEnd);
    assert_eq!(kind("  \n "), ErrorKind::UnexpectedEnd);
}

#[test]
fn structure_errors() {
    assert_eq!(
        kind(r#"{"jobs": [] "x": 1}"#),
        ErrorKind::Expected {
            what: "',' or '}'",
            found: b'"'
        }
    );
    assert_eq!(
        kind(r#"{"jobs": [1 2]}"#),
        ErrorKind::Expected {
            what: "',' or ']'",
            found: b'2'
        }
    );
    assert_eq!(
        kind(r#"{"jobs": [], "x": [1, 2}"#),
        ErrorKind::Expected {
            what: "',' or ']'",
            found: b'}'
        }
    );
    assert_eq!(
        kind(r#"{"jobs": [], "x": {"a" 1}}"#),
        ErrorKind::Expected {
            what: "':'",
            found: b'1'
        }
    );
    assert_eq!(
        kind(r#"{"jobs": [], "x": {1: 2}}"#),
        ErrorKind::Expected {
            what: "a string key",
            found: b'1'
        }
    );
    assert_eq!(
        kind(r#"{"jobs": [], "x": [1,]}"#),
        ErrorKind::Expected {
            what: "a value",
            found: b']'
        }
    );
    assert_eq!(
        kind(r#"{"jobs": [],}"#),
        ErrorKind::Expected {
            what: "a string key",
            found: b'}'
        }
    );
    assert_eq!(kind(r#"{"jobs": []} {}"#), ErrorKind::TrailingData);
    assert_eq!(kind("{\"jobs\": []}\n\n x"), ErrorKind::TrailingData);
}

#[test]
fn deep_nesting_is_bounded_not_a_stack_overflow() {
    let n = queue_scan::MAX_DEPTH + 10;
    let doc = format!(
        "{{\"jobs\": [], \"x\": {}{}}}",
        "[".repeat(n),
        "]".repeat(n)
    );
    assert_eq!(kind(&doc), ErrorKind::TooDeep);
}

#[test]
fn message_names_line_column_and_byte() {
    let e = err("{\n\"jobs\": [\n  {\"job_id\": tru }\n]}");
    assert_eq!((e.line, e.column, e.offset), (3, 14, 25));
    assert_eq!(
        e.to_string(),
        "line 3, column 14 (byte 25): not valid JSON: invalid literal (not true, false or null)"
    );
}

#[test]
fn mangled_bytes_never_panic() {
    // Overwrite each byte with each structurally interesting byte: scan must return.
    let specials = b"{}[],:\"\\ 0-.etfnu\x01\xff";
    for at in 0..GOOD.len() {
        for &b in specials {
            let mut doc = GOOD.as_bytes().to_vec();
            doc[at] = b;
            let _ = scan(&doc);
        }
    }
}
