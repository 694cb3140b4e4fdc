//! robolog-mcap: the indexed reader (footer, summary, chunk and message indexes, or the scan
//! fallback) in every order (lent and iterated, which must agree), with topic and time filters,
//! plus attachments and metadata.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robolog_framing::Bytes;
use robolog_fuzz::{CHUNK_LIMIT, mcap_fields, up_to_first_error};
use robolog_mcap::{McapReader, Order, ReadOptions};

fn reader_options() -> ReadOptions {
    ReadOptions::default().max_record_size(CHUNK_LIMIT as u64)
    .threads(0)
}

fuzz_target!(|data: &[u8]| {
    let Ok(reader) = McapReader::open_with(Bytes::copy_from_slice(data), reader_options())
    else {
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
        // Decoding chunks only up to the last wanted message may miss damage further on, but
        // whenever whole chunks read cleanly, it must give exactly the same messages.
        let whole = McapReader::open_with(
            reader.input().clone(),
            reader_options().decode_whole_chunks(true),
        );
        let query = |reader: &McapReader| -> Option<Vec<_>> {
            let messages = reader
                .messages()
                .topics([topic.as_str()])
                .time_range(1..u64::MAX)
                .iter()
                .ok()?;
            Some(up_to_first_error(
                messages.map(|m| m.map(|m| mcap_fields(&m.as_record()))),
            ))
        };
        let partly = query(&reader);
        if let Some(whole) = whole.ok().as_ref().and_then(query)
            && whole.last().is_none_or(Result::is_ok)
        {
            assert_eq!(partly, Some(whole));
        }
    }
    for index in reader.attachments() {
        let _ = reader.read_attachment(index);
    }
    for index in reader.metadata_indexes() {
        let _ = reader.read_metadata(index);
    }
});
