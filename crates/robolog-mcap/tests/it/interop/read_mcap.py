"""Reads an MCAP file with the official Python `mcap` package and prints what it found as JSON.

Usage: python read_mcap.py FILE

Both of its readers are used: the seeking (indexed) reader, with CRC validation, for messages in
log-time order, attachments and metadata; and the stream reader, with CRC validation, which must
see the same messages in file order.
"""
import json
import sys

from mcap.reader import SeekingReader, NonSeekingReader


def message_json(schema, channel, message):
    return {
        "topic": channel.topic,
        "channel_id": channel.id,
        "message_encoding": channel.message_encoding,
        "schema": schema.name if schema is not None else None,
        "sequence": message.sequence,
        "log_time": message.log_time,
        "publish_time": message.publish_time,
        "data": message.data.hex(),
    }


def main(path):
    with open(path, "rb") as f:
        reader = SeekingReader(f, validate_crcs=True)
        summary = reader.get_summary()
        indexed = [message_json(*m) for m in reader.iter_messages(log_time_order=True)]
        attachments = [
            {
                "name": a.name,
                "media_type": a.media_type,
                "log_time": a.log_time,
                "create_time": a.create_time,
                "data": a.data.hex(),
            }
            for a in reader.iter_attachments()
        ]
        metadata = [{"name": m.name, "metadata": m.metadata} for m in reader.iter_metadata()]
        header = reader.get_header()
    with open(path, "rb") as f:
        streamed = [message_json(*m) for m in NonSeekingReader(f, validate_crcs=True).iter_messages(log_time_order=False)]
    print(
        json.dumps(
            {
                "profile": header.profile,
                "library": header.library,
                "message_count": summary.statistics.message_count if summary.statistics else None,
                "chunk_count": len(summary.chunk_indexes),
                "indexed": indexed,
                "streamed": streamed,
                "attachments": attachments,
                "metadata": metadata,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
