//! bag → MCAP through the facade's convert API.

use super::files::Totals;
use super::ops::Context;

pub(crate) fn ours(_cx: &Context<'_>) -> Result<Totals, Box<dyn std::error::Error>> {
    Err("the facade is not merged yet".into())
}
