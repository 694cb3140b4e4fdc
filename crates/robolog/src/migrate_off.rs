//! Conversions without the `migrate` feature: every channel and message passes as it is.

use std::sync::Arc;

use crate::error::Error;
use crate::format::Format;
use crate::model::{Channel, Message, Metadata};

/// The migration of a conversion that never migrates.
#[derive(Debug)]
pub(crate) struct Migrator;

impl Migrator {
    pub(crate) fn new(_format: Format) -> Self {
        Migrator
    }

    pub(crate) fn may_migrate(&self) -> bool {
        false
    }

    pub(crate) fn distro_record(&self) -> Option<Metadata> {
        None
    }

    pub(crate) fn channel(
        &mut self,
        _input: usize,
        channel: &Arc<Channel>,
    ) -> Result<Arc<Channel>, Vec<String>> {
        Ok(Arc::clone(channel))
    }

    pub(crate) fn message(&mut self, _input: usize, message: Message) -> crate::Result<Message> {
        Ok(message)
    }

    pub(crate) fn error(&self, channel: &Channel, refused: Vec<String>) -> Error {
        self.errors(
            refused
                .into_iter()
                .map(|r| format!("{}: {r}", channel.topic))
                .collect(),
        )
    }

    pub(crate) fn errors(&self, refused: Vec<String>) -> Error {
        Error::Usage(format!("cannot convert: {}", refused.join("; ")))
    }
}
