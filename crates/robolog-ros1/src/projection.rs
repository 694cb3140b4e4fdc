//! Extracting chosen fields straight from message bytes, without building a tree: the way to
//! plot one field over a huge log.
//!
//! Each path compiles to a short program: skip a constant number of bytes (consecutive
//! fixed-size fields, nested fixed-size messages included, are one skip), skip a variable-size
//! field by reading its lengths, step into an array element, read the value. Nothing after the
//! selected field is looked at.

use crate::error::Error;
use crate::path::{ResolvedPath, Step};
use crate::plan::{Count, Elem, FieldPlan, Plan, Segment};
use crate::value::{PrimitiveArray, PrimitiveKind, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Instr {
    /// Skip this many bytes.
    Skip(u64),
    /// Skip a `string`.
    SkipString,
    /// Skip one variable-size field.
    SkipField { elem: Elem, count: Count },
    /// Go to element `index` of an array field (the value is absent when the array is
    /// shorter).
    Element {
        elem: Elem,
        count: Count,
        index: usize,
    },
    /// Read the value here.
    Read(Leaf),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leaf {
    Prim(PrimitiveKind),
    /// `secs` (at offset 0) or `nsecs` (after a `Skip(4)`) of a time (unsigned) or duration.
    TimePart {
        signed: bool,
    },
    String,
    Array {
        kind: PrimitiveKind,
        count: Count,
    },
}

/// Compiled field paths that [`Projection::extract`] reads from message bytes directly (see
/// the module documentation). Build one with [`Plan::projection`].
///
/// Only the bytes up to the selected fields are checked: a message that is cut or malformed
/// after them still yields values.
#[derive(Debug, Clone)]
pub struct Projection {
    plan: Plan,
    paths: Vec<ResolvedPath>,
    programs: Vec<Vec<Instr>>,
}

impl Plan {
    /// Compiles `paths` for [`Projection::extract`]. Each path must end at a primitive, a
    /// `string`, a `time`/`duration` (or its `secs`/`nsecs`) or an array of primitives; to get
    /// a whole message or a string array, decode the message.
    ///
    /// ```
    /// use robolog_ros1::{Plan, Value};
    /// let plan = Plan::from_bundle("my_pkg/Reading", "string frame\nfloat64[] samples\nint32 id\n")?;
    /// let projection = plan.projection(&["id", "samples[1]"])?;
    /// let message = [1, 0, 0, 0, b'm', 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f,
    ///                0, 0, 0, 0, 0, 0, 0, 0x40, 7, 0, 0, 0];
    /// assert_eq!(
    ///     projection.extract(&message)?,
    ///     [Some(Value::Int32(7)), Some(Value::Float64(2.0))]
    /// );
    /// # Ok::<(), robolog_ros1::Error>(())
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
        let mut skip = 0u64;
        let mut message = 0usize;
        let mut budget = SKIP_INLINE_BUDGET;
        let mut steps = path.steps.iter().peekable();
        while let Some(step) = steps.next() {
            let Step::Field(index) = *step else {
                return Err(not_a_leaf("a value"));
            };
            let fields = &self.message(message).fields;
            for field in fields.iter().take(index) {
                self.skip_program(field, &mut program, &mut skip, &mut budget);
            }
            let field: &FieldPlan = &fields[index];
            let elem = match (field.count, steps.peek()) {
                (Count::One, _) => field.elem,
                (count, Some(Step::Index(element))) => {
                    flush(&mut program, &mut skip);
                    program.push(Instr::Element {
                        elem: field.elem,
                        count,
                        index: *element,
                    });
                    steps.next();
                    field.elem
                }
                (count, _) => {
                    return match field.elem {
                        Elem::Prim(kind) => {
                            flush(&mut program, &mut skip);
                            program.push(Instr::Read(Leaf::Array { kind, count }));
                            Ok(program)
                        }
                        Elem::String => Err(not_a_leaf("a string array")),
                        Elem::Message(_) => Err(not_a_leaf("a message array")),
                    };
                }
            };
            match elem {
                Elem::Message(child) => {
                    if steps.peek().is_none() {
                        return Err(not_a_leaf("a message"));
                    }
                    message = child;
                }
                Elem::String => {
                    flush(&mut program, &mut skip);
                    program.push(Instr::Read(Leaf::String));
                    return Ok(program);
                }
                Elem::Prim(kind) => {
                    let signed = kind == PrimitiveKind::Duration;
                    match steps.next() {
                        Some(Step::Secs) => {
                            flush(&mut program, &mut skip);
                            program.push(Instr::Read(Leaf::TimePart { signed }));
                        }
                        Some(Step::Nsecs) => {
                            skip += 4;
                            flush(&mut program, &mut skip);
                            program.push(Instr::Read(Leaf::TimePart { signed }));
                        }
                        _ => {
                            flush(&mut program, &mut skip);
                            program.push(Instr::Read(Leaf::Prim(kind)));
                        }
                    }
                    return Ok(program);
                }
            }
        }
        Err(not_a_leaf("a message"))
    }
}

impl Plan {
    /// Appends the instructions that skip `field`: constant skips merge, and a nested message
    /// with a variable part is skipped field by field, so that its fixed-size parts merge with
    /// their neighbours (the header of most messages becomes "skip 12, skip a string").
    ///
    /// `budget` bounds the fields visited: a hostile definition that nests many variable-size
    /// messages in each other would otherwise make the program grow exponentially; past the
    /// budget, nested messages are skipped by walking their plan at extraction time.
    fn skip_program(
        &self,
        field: &FieldPlan,
        program: &mut Vec<Instr>,
        skip: &mut u64,
        budget: &mut usize,
    ) {
        *budget = budget.saturating_sub(1);
        match (field.fixed_size, field.elem, field.count) {
            (Some(size), _, _) => *skip = skip.saturating_add(size),
            (None, Elem::String, Count::One) => {
                flush(program, skip);
                program.push(Instr::SkipString);
            }
            (None, Elem::Message(child), Count::One)
                if self.message(child).fields.len() <= *budget =>
            {
                for inner in &self.message(child).fields {
                    self.skip_program(inner, program, skip, budget);
                }
            }
            (None, elem, count) => {
                flush(program, skip);
                program.push(Instr::SkipField { elem, count });
            }
        }
    }
}

/// How many fields one path's program may visit while inlining the skips of nested messages.
const SKIP_INLINE_BUDGET: usize = 1024;

fn flush(program: &mut Vec<Instr>, skip: &mut u64) {
    if *skip > 0 {
        program.push(Instr::Skip(*skip));
        *skip = 0;
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
        for (i, program) in self.programs.iter().enumerate() {
            let mut cursor = Cursor {
                plan: &self.plan,
                data,
                pos: 0,
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
}

impl<'a> Cursor<'_, 'a> {
    fn run(&mut self, program: &[Instr]) -> Result<Option<Value<'a>>, Short> {
        for instr in program {
            match *instr {
                Instr::Skip(n) => self.skip(n)?,
                Instr::SkipString => {
                    let len = self.u32()?;
                    self.skip(u64::from(len))?;
                }
                Instr::SkipField { elem, count } => self.skip_field(elem, count)?,
                Instr::Element { elem, count, index } => {
                    let len = self.count(count)?;
                    if index as u64 >= len {
                        return Ok(None);
                    }
                    self.skip_elements(elem, index as u64)?;
                }
                Instr::Read(leaf) => return self.read(leaf).map(Some),
            }
        }
        Ok(None)
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

    #[inline]
    fn u32(&mut self) -> Result<u32, Short> {
        let bytes = self.take(4)?;
        Ok(u32::from_le_bytes(
            bytes.try_into().map_err(|_| (self.pos, 4))?,
        ))
    }

    fn count(&mut self, count: Count) -> Result<u64, Short> {
        match count {
            Count::Fixed(n) => Ok(n),
            _ => self.u32().map(u64::from),
        }
    }

    fn skip_elements(&mut self, elem: Elem, n: u64) -> Result<(), Short> {
        match elem {
            Elem::Prim(kind) => self.skip(n.saturating_mul(kind.size() as u64)),
            Elem::String => {
                for _ in 0..n {
                    let len = self.u32()?;
                    self.skip(u64::from(len))?;
                }
                Ok(())
            }
            Elem::Message(id) => {
                let plan = self.plan;
                match plan.message(id).fixed_size {
                    Some(size) => self.skip(n.saturating_mul(size)),
                    // An element that reads a count or a length advances by at least 4 bytes,
                    // so this loop ends within data.len() / 4 rounds. An element that advances
                    // by nothing read nothing (its type is variable-size only through arrays
                    // like `string[0]`), so every element takes no bytes: stop there rather
                    // than loop up to 2^64 times.
                    None => {
                        for _ in 0..n {
                            let before = self.pos;
                            self.skip_message(id)?;
                            if self.pos == before {
                                break;
                            }
                        }
                        Ok(())
                    }
                }
            }
        }
    }

    fn skip_field(&mut self, elem: Elem, count: Count) -> Result<(), Short> {
        match count {
            Count::One => self.skip_elements(elem, 1),
            count => {
                let n = self.count(count)?;
                self.skip_elements(elem, n)
            }
        }
    }

    fn skip_message(&mut self, id: usize) -> Result<(), Short> {
        let plan = self.plan;
        let message = plan.message(id);
        for segment in &message.segments {
            match segment {
                Segment::Run { template, .. } => self.skip(template.size as u64)?,
                Segment::Field(index) => {
                    let field = &message.fields[*index];
                    self.skip_field(field.elem, field.count)?;
                }
            }
        }
        Ok(())
    }

    fn read(&mut self, leaf: Leaf) -> Result<Value<'a>, Short> {
        let at = self.pos;
        match leaf {
            Leaf::Prim(kind) => {
                let bytes = self.take(kind.size() as u64)?;
                kind.read(bytes).ok_or((at, kind.size() as u64))
            }
            Leaf::TimePart { signed } => {
                let raw = self.u32()?;
                Ok(if signed {
                    Value::Int32(raw as i32)
                } else {
                    Value::UInt32(raw)
                })
            }
            Leaf::String => {
                let len = self.u32()?;
                Ok(Value::String(self.take(u64::from(len))?))
            }
            Leaf::Array { kind, count } => {
                let n = self.count(count)?;
                let bytes = self.take(n.saturating_mul(kind.size() as u64))?;
                PrimitiveArray::new(kind, bytes)
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
    fn constant_prefix_is_one_skip() {
        let plan = Plan::from_bundle(
            "p/M",
            "uint32 a\ntime t\nP2 p\nfloat64 x\n===\nMSG: p/P2\nfloat32 x\nfloat32 y\n",
        )
        .unwrap();
        let path = plan.path("x").unwrap();
        assert_eq!(
            plan.program(&path).unwrap(),
            [
                Instr::Skip(20),
                Instr::Read(Leaf::Prim(PrimitiveKind::Float64))
            ]
        );
        let path = plan.path("p.y").unwrap();
        assert_eq!(
            plan.program(&path).unwrap(),
            [
                Instr::Skip(16),
                Instr::Read(Leaf::Prim(PrimitiveKind::Float32))
            ]
        );
        let path = plan.path("t.nsecs").unwrap();
        assert_eq!(
            plan.program(&path).unwrap(),
            [
                Instr::Skip(8),
                Instr::Read(Leaf::TimePart { signed: false })
            ]
        );
    }

    #[test]
    fn variable_nested_messages_are_skipped_inline() {
        let plan = Plan::from_bundle(
            "p/M",
            "Header header\nfloat64 x\n===\nMSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n",
        )
        .unwrap();
        let path = plan.path("x").unwrap();
        assert_eq!(
            plan.program(&path).unwrap(),
            [
                Instr::Skip(12),
                Instr::SkipString,
                Instr::Read(Leaf::Prim(PrimitiveKind::Float64))
            ]
        );
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
        // 8^6 empty strings, then `last`.
        let mut message = vec![0u8; 4 * 8usize.pow(6)];
        message.push(42);
        let projection = plan.projection(&["last"]).unwrap();
        assert_eq!(
            projection.extract(&message).unwrap(),
            [Some(Value::UInt8(42))]
        );
    }
}
