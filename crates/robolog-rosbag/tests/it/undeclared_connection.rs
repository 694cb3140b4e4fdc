//! Regression: when a chunk's index does not match its records, the indexed reader walks the
//! chunk, and used to hand out messages on connections that no CONNECTION record defines (the
//! scan and the streaming reader drop those and say so). Found with the hostile corpus
//! (`testdata/bad/rosbag/message-on-undeclared-connection.bag`).

use crate::bad_files::{MESSAGES, Spec, chatter_connection, message, model};
use robolog_rosbag::{Bag, Order};

#[test]
fn the_index_fallback_drops_messages_on_undeclared_connections() {
    // Connection 0, then a message on connection 7 that the index files under connection 0,
    // then a message on connection 0.
    let mut content = chatter_connection();
    let stray = content.len() as u32;
    content.extend(message(7, MESSAGES[0].0, MESSAGES[0].1));
    let good = content.len() as u32;
    content.extend(message(0, MESSAGES[1].0, MESSAGES[1].1));
    let bag = model(Spec {
        content: Some(content),
        index_entries: Some((2, vec![(MESSAGES[0].0, stray), (MESSAGES[1].0, good)])),
        ..Spec::default()
    });
    let bag = Bag::open(bag.bytes).unwrap();
    for order in [Order::LogTime, Order::File] {
        let messages: Vec<_> = bag
            .messages()
            .order(order)
            .threads(0)
            .into_iter()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(messages.len(), 1, "{order:?}");
        assert_eq!(messages[0].conn, 0);
        assert_eq!(&messages[0].data[..], MESSAGES[1].1);
        assert!(bag.connection(messages[0].conn).is_some());
    }
}
