//! A runner for the upstream MCAP conformance harness (spec section 11), built on the same JSON
//! code as the test suite:
//!
//! ```text
//! cargo run -p robolog-mcap --example conformance_runner -- stream  FILE.mcap   # {"records":[…]}
//! cargo run -p robolog-mcap --example conformance_runner -- indexed FILE.mcap   # {"schemas":…}
//! cargo run -p robolog-mcap --example conformance_runner -- write   FILE.json   # MCAP bytes
//! ```

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../tests/it/support/conformance.rs"]
mod conformance;

use std::io::Write;

use robolog_mcap::{Bytes, LinearReader, McapReader, ReadOptions};
use serde_json::{Value, json};

fn stream(data: Vec<u8>) -> Value {
    let mut reader = LinearReader::with_options(Bytes::from(data), ReadOptions::default());
    let mut records = Vec::new();
    while let Some(record) = reader.next_record() {
        let record = record.unwrap_or_else(|e| panic!("{e}"));
        if let Some(value) = conformance::record_json(&record) {
            records.push(value);
        }
    }
    json!({ "records": records })
}

fn indexed(data: Vec<u8>) -> Value {
    let reader = McapReader::open(Bytes::from(data)).unwrap_or_else(|e| panic!("{e}"));
    let summary = reader.summary();
    let messages: Vec<Value> = reader
        .messages()
        .iter()
        .unwrap_or_else(|e| panic!("{e}"))
        .map(|m| conformance::message_json(&m.unwrap_or_else(|e| panic!("{e}")).as_record()))
        .collect();
    json!({
        "schemas": summary.schemas.values().map(|s| conformance::schema_json(s)).collect::<Vec<_>>(),
        "channels": summary.channels.values().map(|c| conformance::channel_json(c)).collect::<Vec<_>>(),
        "messages": messages,
        "statistics": summary.statistics.iter().map(conformance::statistics_json).collect::<Vec<_>>(),
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(mode), Some(path)) = (args.get(1), args.get(2)) else {
        panic!("usage: conformance_runner stream|indexed|write FILE");
    };
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    match mode.as_str() {
        "stream" => println!("{}", stream(data)),
        "indexed" => println!("{}", indexed(data)),
        "write" => {
            let expected: Value = serde_json::from_slice(&data).expect("JSON input");
            let bytes = conformance::write_from_json(&expected);
            std::io::stdout().write_all(&bytes).expect("stdout");
        }
        other => panic!("unknown mode {other}"),
    }
}
