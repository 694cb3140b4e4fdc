//! robolog-mcap: the indexed reader (footer, summary, chunk and message indexes, or the scan
//! fallback) in every order (lent and iterated, which must agree), with topic and time filters,
//! plus attachments and metadata.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robolog_framing::Bytes;
use robolog_fuzz::{CHUNK_LIMIT, mcap_fields, up_to_first_error};
use robolog_mcap::{McapReader, Order, ReadOptions};

fuzz_target!(|data: &[u8]| {
    let options = ReadOptions {
        record_limit: CHUNK_LIMIT as u64,
        cache_bytes: CHUNK_LIMIT,
        ..ReadOptions::default()
    }
    .with_threads(0);
    let Ok(reader) = McapReader::with_options(Bytes::copy_from_slice(data), options) else {
        return;
    };
    let _ = reader.is_draft();
    for order in [Order::LogTime, Order::ReverseLogTime, Order::File] {
        // Lending and iterating must agree, up to and including the first error.
        let query = reader.messages().order(order);
        let (Ok(iterated), Ok(mut lending)) = (query.clone().iter(), query.iter()) else {
            continue;
        };
        let want = up_to_first_error(iterated.map(|m| m.map(|m| mcap_fields(&m.as_record()))));
        let got = up_to_first_error(std::iter::from_fn(|| {
            lending.next_ref().map(|m| m.map(|m| mcap_fields(&m)))
        }));
        assert_eq!(got, want);
    }
    let topic = reader
        .summary()
        .channels
        .values()
        .next()
        .map(|c| c.topic.to_string());
    if let Some(topic) = topic {
        if let Ok(messages) = reader
            .messages()
            .topics([topic])
            .time_range(1, u64::MAX)
            .iter()
        {
            for message in messages {
                if message.is_err() {
                    break;
                }
            }
        }
    }
    for index in reader.attachments() {
        let _ = reader.read_attachment(index);
    }
    for index in reader.metadata_indexes() {
        let _ = reader.read_metadata(index);
    }
});
