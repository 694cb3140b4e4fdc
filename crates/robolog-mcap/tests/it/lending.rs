//! `next_ref` lends exactly what iterating gives: the linear reader's messages and the indexed
//! reader's in every order, on every MCAP file of the test data (errors included, compared by
//! their messages).

use robolog_mcap::{Bytes, LinearReader, McapReader, Message, Order, OwnedMessage, Result};
use robolog_testkit::testdata;

type Seen = std::result::Result<(u16, u32, u64, u64, Vec<u8>), String>;

fn lent(m: Result<Message<'_>>) -> Seen {
    m.map(|m| {
        (
            m.channel_id,
            m.sequence,
            m.log_time,
            m.publish_time,
            m.data.to_vec(),
        )
    })
    .map_err(|e| e.to_string())
}

fn iterated(m: Result<OwnedMessage>) -> Seen {
    match m {
        Ok(m) => lent(Ok(m.as_record())),
        Err(e) => Err(e.to_string()),
    }
}

#[test]
fn lending_gives_what_iterating_gives_on_every_test_file() {
    let files = testdata::files_with_extension("", ".mcap");
    assert!(files.len() > 100, "{}", files.len());
    let (mut linear_messages, mut indexed_messages) = (0, 0);
    for path in files {
        let data = Bytes::from(std::fs::read(&path).unwrap());
        let name = path.display();

        let want: Vec<Seen> = LinearReader::new(data.clone())
            .into_messages()
            .map(iterated)
            .collect();
        let mut messages = LinearReader::new(data.clone()).into_messages();
        let mut got = Vec::new();
        while let Some(m) = messages.next_ref() {
            got.push(lent(m));
        }
        assert_eq!(got, want, "{name}: linear");
        linear_messages += want.len();

        let Ok(reader) = McapReader::open(data) else {
            continue;
        };
        for order in [Order::LogTime, Order::ReverseLogTime, Order::File] {
            let query = reader.messages().order(order);
            let want: Vec<Seen> = match query.clone().iter() {
                Ok(messages) => messages.map(iterated).collect(),
                Err(e) => vec![Err(e.to_string())],
            };
            let got = match query.iter() {
                Ok(mut messages) => {
                    let mut got = Vec::new();
                    while let Some(m) = messages.next_ref() {
                        got.push(lent(m));
                    }
                    got
                }
                Err(e) => vec![Err(e.to_string())],
            };
            assert_eq!(got, want, "{name}: indexed {order:?}");
            indexed_messages += want.len();
        }
    }
    assert!(linear_messages > 1000, "{linear_messages}");
    assert!(indexed_messages > 1000, "{indexed_messages}");
}
