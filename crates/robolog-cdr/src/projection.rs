//! Extracting chosen fields straight from message bytes, without building a tree: the way to
//! plot one field over a huge log.
//!
//! Each path compiles to a short program: skip a run of fixed-layout fields (consecutive ones,
//! nested fixed-layout messages included, are one skip whose size is looked up by the
//! alignment phase it starts at), skip a variable-size field by reading its lengths, step into
//! an array element, read the value. Nothing after the selected field is looked at.

use crate::error::Error;
use crate::header::{Encapsulation, HEADER_LEN};
use crate::path::{ResolvedPath, Step};
use crate::plan::{Count, Elem, FieldPlan, Layout, Plan, alignment, padding};
use crate::value::{ByteOrder, PrimitiveArray, PrimitiveKind, Value, WideString};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Instr {
    /// Skip fixed-layout fields: as many bytes as their layout takes from the current phase.
    Skip(Layout),
    /// Skip field `field` of message `message` (not of fixed layout).
    SkipField { message: usize, field: usize },
    /// Go to element `index` of array field `field` of message `message` (the value is absent
    /// when the array is shorter).
    Element {
        message: usize,
        field: usize,
        index: usize,
    },
    /// Read the value here.
    Read(Leaf),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leaf {
    Prim(PrimitiveKind),
    String,
    WString,
    /// The whole array field `field` of message `message`, of primitives.
    Array {
        message: usize,
        field: usize,
    },
}

/// Compiled field paths that [`Projection::extract`] reads from message bytes directly (see
/// the module documentation). Build one with [`Plan::projection`].
///
/// Only the bytes up to the selected fields are checked: a message that is cut or malformed
/// after them still yields values. Strings are read leniently (see [`Plan::decode`]).
#[derive(Debug, Clone)]
pub struct Projection {
    plan: Plan,
    paths: Vec<ResolvedPath>,
    programs: Vec<Vec<Instr>>,
}

impl Plan {
    /// Compiles `paths` for [`Projection::extract`]. Each path must end at a primitive, a
    /// string or an array of primitives; to get a whole message or a string array, decode the
    /// message.
    ///
    /// ```
    /// use robolog_cdr::{Plan, Value};
    /// let plan = Plan::from_bundle("my_pkg/Reading", "string frame\nfloat64[] samples\nint32 id\n")?;
    /// let projection = plan.projection(&["id", "samples[1]"])?;
    /// let message = [
    ///     0, 1, 0, 0,                                            // header
    ///     2, 0, 0, 0, b'm', 0, 0, 0,                             // frame, padding
    ///     2, 0, 0, 0, 0, 0, 0, 0,                                // count, padding
    ///     0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0x40, // samples
    ///     7, 0, 0, 0,                                            // id
    /// ];
    /// assert_eq!(
    ///     projection.extract(&message)?,
    ///     [Some(Value::Int32(7)), Some(Value::Float64(2.0))]
    /// );
    /// # Ok::<(), robolog_cdr::Error>(())
    /// ```
    pub fn projection(&self, paths: &[&str]) -> Result<Projection, Error> {
        let mut resolved = Vec::with_capacity(paths.len());
        let mut programs = Vec::with_capacity(paths.len());
        for path in paths {
            let path = self.path(path)?;
            programs.push(self.program(&path)?);
            resolved.push(path);
        }
        Ok(Projection {
            plan: self.clone(),
            paths: resolved,
            programs,
        })
    }

    fn program(&self, path: &ResolvedPath) -> Result<Vec<Instr>, Error> {
        let not_a_leaf = |what: &str| Error::InvalidPath {
            path: path.text.clone(),
            reason: format!("the path ends at {what}; select a field inside it"),
        };
        let mut program = Vec::new();
        let mut skip = None;
        let mut message = 0usize;
        let mut budget = SKIP_INLINE_BUDGET;
        let mut steps = path.steps.iter().peekable();
        while let Some(step) = steps.next() {
            let Step::Field(index) = *step else {
                return Err(not_a_leaf("a value"));
            };
            for field in 0..index {
                self.skip_program(message, field, &mut program, &mut skip, &mut budget);
            }
            let field: &FieldPlan = &self.message(message).fields[index];
            let elem = match (field.count, steps.peek()) {
                (Count::One, _) => field.elem,
                (_, Some(Step::Index(element))) => {
                    flush(&mut program, &mut skip);
                    program.push(Instr::Element {
                        message,
                        field: index,
                        index: *element,
                    });
                    steps.next();
                    field.elem
                }
                (_, _) => {
                    return match field.elem {
                        Elem::Prim(_) => {
                            flush(&mut program, &mut skip);
                            program.push(Instr::Read(Leaf::Array {
                                message,
                                field: index,
                            }));
                            Ok(program)
                        }
                        Elem::String | Elem::WString => Err(not_a_leaf("a string array")),
                        Elem::Message(_) => Err(not_a_leaf("a message array")),
                    };
                }
            };
            match elem {
                Elem::Message(child) => {
                    if steps.peek().is_none() {
                        return Err(not_a_leaf("a message"));
                    }
                    if self.message(child).empty {
                        // An empty message has no fields to select.
                        return Err(not_a_leaf("an empty message"));
                    }
                    message = child;
                }
                Elem::String | Elem::WString | Elem::Prim(_) => {
                    flush(&mut program, &mut skip);
                    program.push(Instr::Read(match elem {
                        Elem::Prim(kind) => Leaf::Prim(kind),
                        Elem::WString => Leaf::WString,
                        _ => Leaf::String,
                    }));
                    return Ok(program);
                }
            }
        }
        Err(not_a_leaf("a message"))
    }

    /// Appends the instructions that skip field `field` of message `message`: fixed layouts
    /// merge, and a nested message with a variable part is skipped field by field, so that its
    /// fixed parts merge with their neighbours (the header of most messages becomes "skip 8,
    /// skip a string").
    ///
    /// `budget` bounds the fields visited: a hostile definition that nests many variable-size
    /// messages in each other would otherwise make the program grow exponentially; past the
    /// budget, nested messages are skipped by walking their plan at extraction time.
    fn skip_program(
        &self,
        message: usize,
        field: usize,
        program: &mut Vec<Instr>,
        skip: &mut Option<Layout>,
        budget: &mut usize,
    ) {
        *budget = budget.saturating_sub(1);
        let plan: &FieldPlan = &self.message(message).fields[field];
        match (plan.layout, plan.elem, plan.count) {
            (Some(layout), _, _) => {
                *skip = Some(skip.map_or(layout, |before| before.then(&layout)));
            }
            (None, Elem::Message(child), Count::One)
                if self.message(child).fields.len() <= *budget =>
            {
                for inner in 0..self.message(child).fields.len() {
                    self.skip_program(child, inner, program, skip, budget);
                }
            }
            (None, _, _) => {
                flush(program, skip);
                program.push(Instr::SkipField { message, field });
            }
        }
    }
}

/// How many fields one path's program may visit while inlining the skips of nested messages.
const SKIP_INLINE_BUDGET: usize = 1024;

fn flush(program: &mut Vec<Instr>, skip: &mut Option<Layout>) {
    if let Some(layout) = skip.take() {
        program.push(Instr::Skip(layout));
    }
}

impl Projection {
    /// The paths, in the order their values come out.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.paths.iter().map(ResolvedPath::as_str)
    }

    /// How many paths there are.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// Whether there is no path.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// The values of the paths in one message: `None` where an array index is past the end of
    /// that message's array.
    pub fn extract<'a>(&self, data: &'a [u8]) -> Result<Vec<Option<Value<'a>>>, Error> {
        let mut out = Vec::with_capacity(self.paths.len());
        self.extract_into(data, &mut out)?;
        Ok(out)
    }

    /// Like [`Projection::extract`], reusing `out` (cleared first).
    pub fn extract_into<'a>(
        &self,
        data: &'a [u8],
        out: &mut Vec<Option<Value<'a>>>,
    ) -> Result<(), Error> {
        out.clear();
        self.visit(data, |_, value| out.push(value))
    }

    /// Calls `visitor(i, value)` for each path `i` in order, with the value it selects in
    /// `data` (`None` where an array index is past the end).
    pub fn visit<'a>(
        &self,
        data: &'a [u8],
        mut visitor: impl FnMut(usize, Option<Value<'a>>),
    ) -> Result<(), Error> {
        let encapsulation = Encapsulation::from_header(data)?;
        for (i, program) in self.programs.iter().enumerate() {
            let mut cursor = Cursor {
                plan: &self.plan,
                data,
                pos: HEADER_LEN,
                order: encapsulation.byte_order(),
                xcdr2: encapsulation.is_xcdr2(),
            };
            let value = cursor
                .run(program)
                .map_err(|(offset, needed)| Error::Truncated {
                    path: self.paths[i].field_path.clone(),
                    offset,
                    needed,
                    available: data.len().saturating_sub(offset),
                })?;
            visitor(i, value);
        }
        Ok(())
    }
}

/// Where a skip or read failed: offset and bytes needed.
type Short = (usize, u64);

struct Cursor<'p, 'a> {
    plan: &'p Plan,
    data: &'a [u8],
    pos: usize,
    order: ByteOrder,
    xcdr2: bool,
}

impl<'a> Cursor<'_, 'a> {
    fn run(&mut self, program: &[Instr]) -> Result<Option<Value<'a>>, Short> {
        for instr in program {
            match *instr {
                Instr::Skip(layout) => {
                    let bytes = layout.size(self.phase(), self.xcdr2);
                    self.skip(bytes)?;
                }
                Instr::SkipField { message, field } => {
                    let plan = self.plan;
                    self.skip_field(&plan.message(message).fields[field])?;
                }
                Instr::Element {
                    message,
                    field,
                    index,
                } => {
                    let plan = self.plan;
                    let field = &plan.message(message).fields[field];
                    let len = self.count(field)?;
                    if index as u64 >= len {
                        return Ok(None);
                    }
                    self.skip_elements(field, index as u64)?;
                }
                Instr::Read(leaf) => return self.read(leaf).map(Some),
            }
        }
        Ok(None)
    }

    fn phase(&self) -> usize {
        self.pos - HEADER_LEN
    }

    fn max_align(&self) -> usize {
        if self.xcdr2 { 4 } else { 8 }
    }

    #[inline]
    fn take(&mut self, n: u64) -> Result<&'a [u8], Short> {
        let data: &'a [u8] = self.data;
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| self.pos.checked_add(n))
            .filter(|end| *end <= data.len())
            .ok_or((self.pos, n))?;
        let bytes = data.get(self.pos..end).ok_or((self.pos, n))?;
        self.pos = end;
        Ok(bytes)
    }

    #[inline]
    fn skip(&mut self, n: u64) -> Result<(), Short> {
        self.take(n).map(|_| ())
    }

    /// Skips the padding before a value of alignment `align`.
    fn align(&mut self, align: usize) -> Result<(), Short> {
        self.skip(padding(self.phase() as u64, align as u64))
    }

    fn u32(&mut self) -> Result<u32, Short> {
        self.align(4)?;
        let bytes = self.take(4)?;
        let raw: [u8; 4] = bytes.try_into().map_err(|_| (self.pos, 4))?;
        Ok(match self.order {
            ByteOrder::LittleEndian => u32::from_le_bytes(raw),
            ByteOrder::BigEndian => u32::from_be_bytes(raw),
        })
    }

    /// An array field's length: fixed, or a sequence's count.
    fn count(&mut self, field: &FieldPlan) -> Result<u64, Short> {
        Ok(match field.count {
            Count::One => 1,
            Count::Fixed(n) => n,
            Count::Sequence => u64::from(self.u32()?),
        })
    }

    fn string(&mut self) -> Result<&'a [u8], Short> {
        let len = self.u32()?;
        let bytes = self.take(u64::from(len))?;
        Ok(match bytes.split_last() {
            Some((0, text)) => text,
            _ => bytes,
        })
    }

    fn wstring(&mut self) -> Result<WideString<'a>, Short> {
        let count = self.u32()?;
        let units = self.take(u64::from(count).saturating_mul(4))?;
        Ok(WideString::new_unchecked_len(units, self.order))
    }

    fn skip_message(&mut self, id: usize) -> Result<(), Short> {
        let plan = self.plan;
        let message = plan.message(id);
        if let Some(layout) = message.layout {
            return self.skip(layout.size(self.phase(), self.xcdr2));
        }
        for field in &message.fields {
            self.skip_field(field)?;
        }
        Ok(())
    }

    /// Skips `n` elements of an array field (its count already read). Every element takes at
    /// least one byte and `n` of them must fit what is left, so loops end within the data.
    fn skip_elements(&mut self, field: &FieldPlan, n: u64) -> Result<(), Short> {
        let needed = n.saturating_mul(field.element_min);
        if needed > self.data.len().saturating_sub(self.pos) as u64 {
            return Err((self.pos, needed));
        }
        match field.elem {
            Elem::Prim(kind) => {
                if n > 0 {
                    self.align(alignment(kind, self.max_align()))?;
                }
                self.skip(n.saturating_mul(kind.size() as u64))
            }
            Elem::String => {
                for _ in 0..n {
                    self.string()?;
                }
                Ok(())
            }
            Elem::WString => {
                for _ in 0..n {
                    self.wstring()?;
                }
                Ok(())
            }
            Elem::Message(id) => {
                for _ in 0..n {
                    self.skip_message(id)?;
                }
                Ok(())
            }
        }
    }

    fn skip_field(&mut self, field: &FieldPlan) -> Result<(), Short> {
        if let Some(layout) = field.layout {
            return self.skip(layout.size(self.phase(), self.xcdr2));
        }
        let n = self.count(field)?;
        self.skip_elements(field, n)
    }

    fn read(&mut self, leaf: Leaf) -> Result<Value<'a>, Short> {
        match leaf {
            Leaf::Prim(kind) => {
                self.align(alignment(kind, self.max_align()))?;
                let at = self.pos;
                let bytes = self.take(kind.size() as u64)?;
                kind.read(bytes, self.order).ok_or((at, kind.size() as u64))
            }
            Leaf::String => self.string().map(Value::String),
            Leaf::WString => self.wstring().map(Value::WString),
            Leaf::Array { message, field } => {
                let plan = self.plan;
                let field = &plan.message(message).fields[field];
                let Elem::Prim(kind) = field.elem else {
                    return Err((self.pos, 0));
                };
                let n = self.count(field)?;
                if n > 0 {
                    self.align(alignment(kind, self.max_align()))?;
                }
                let at = self.pos;
                let bytes = self.take(n.saturating_mul(kind.size() as u64))?;
                PrimitiveArray::new(kind, bytes, self.order)
                    .map(Value::Array)
                    .ok_or((at, n))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variable_header_is_one_skip_and_a_string() {
        let plan = Plan::from_bundle(
            "p/M",
            "std_msgs/Header header\nfloat64 x\n===\nMSG: std_msgs/Header\n\
             builtin_interfaces/Time stamp\nstring frame_id\n",
        )
        .unwrap();
        let path = plan.path("x").unwrap();
        let program = plan.program(&path).unwrap();
        assert!(matches!(
            program.as_slice(),
            [
                Instr::Skip(_),
                Instr::SkipField {
                    message: 1,
                    field: 1
                },
                Instr::Read(Leaf::Prim(PrimitiveKind::Float64))
            ]
        ));
    }

    #[test]
    fn inlining_stops_at_the_budget() {
        // Each level holds 8 copies of the next: inlining everything would visit 8^6 fields.
        let mut bundle =
            String::from("L1 a\nL1 b\nL1 c\nL1 d\nL1 e\nL1 f\nL1 g\nL1 h\nuint8 last\n");
        for level in 1..6 {
            bundle.push_str(&format!("===\nMSG: p/L{level}\n"));
            for name in ["a", "b", "c", "d", "e", "f", "g", "h"] {
                bundle.push_str(&format!("L{} {name}\n", level + 1));
            }
        }
        bundle.push_str("===\nMSG: p/L6\nstring s\n");
        let plan = Plan::from_bundle("p/M", &bundle).unwrap();
        let path = plan.path("last").unwrap();
        let program = plan.program(&path).unwrap();
        assert!(program.len() < 2 * SKIP_INLINE_BUDGET, "{}", program.len());
        // 8^6 strings of length 1 (just the NUL), then `last`.
        let mut message = vec![0, 1, 0, 0];
        for _ in 0..8usize.pow(6) {
            message.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
        }
        message.truncate(message.len() - 3);
        message.push(42);
        let projection = plan.projection(&["last"]).unwrap();
        assert_eq!(
            projection.extract(&message).unwrap(),
            [Some(Value::UInt8(42))]
        );
    }
}
