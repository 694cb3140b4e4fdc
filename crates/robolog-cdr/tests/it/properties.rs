//! Property tests: random definitions with random values round-trip encode → decode → encode
//! byte-exact in every encapsulation, and random bytes never make the decoder panic.

use proptest::prelude::*;
use robolog_cdr::{
    ByteOrder, Encapsulation, Plan, PrimitiveArray, PrimitiveKind, Tree, Value, WideString,
};
use robolog_msg::{Dialect, Registry, TypeName};

/// A field type of a generated definition.
#[derive(Debug, Clone)]
enum Elem {
    Prim(&'static str),
    /// A type with a larger index (so the types form a DAG).
    Message(usize),
}

#[derive(Debug, Clone, Copy)]
enum Array {
    Scalar,
    Fixed(u8),
    Variable,
    Bounded(u8),
}

type Schema = Vec<Vec<(Elem, Array)>>;

const PRIMITIVES: [&str; 21] = [
    "bool",
    "byte",
    "char",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float32",
    "float64",
    "string",
    "wstring",
    "string<=3",
    "wstring<=2",
    "time",
    "duration",
    "float64",
    "uint8",
];

fn schema() -> impl Strategy<Value = Schema> {
    (1usize..5).prop_flat_map(|types| {
        (0..types)
            .map(|index| {
                let elem = (0usize..PRIMITIVES.len() + 4).prop_map(move |choice| {
                    if choice < PRIMITIVES.len() || index + 1 >= types {
                        Elem::Prim(PRIMITIVES[choice % PRIMITIVES.len()])
                    } else {
                        Elem::Message(index + 1 + choice % (types - index - 1))
                    }
                });
                let array = prop_oneof![
                    4 => Just(Array::Scalar),
                    1 => (1u8..4).prop_map(Array::Fixed),
                    1 => Just(Array::Variable),
                    1 => (1u8..4).prop_map(Array::Bounded),
                ];
                // Empty messages (0 fields) are common on purpose.
                proptest::collection::vec((elem, array), 0..7)
            })
            .collect::<Vec<_>>()
    })
}

fn definition_text(fields: &[(Elem, Array)]) -> String {
    let mut text = String::new();
    for (i, (elem, array)) in fields.iter().enumerate() {
        match elem {
            Elem::Prim(name) => text.push_str(name),
            Elem::Message(index) => text.push_str(&format!("T{index}")),
        }
        match array {
            Array::Scalar => {}
            Array::Fixed(n) => text.push_str(&format!("[{n}]")),
            Array::Variable => text.push_str("[]"),
            Array::Bounded(n) => text.push_str(&format!("[<={n}]")),
        }
        text.push_str(&format!(" f{i}\n"));
    }
    text
}

fn compile(schema: &Schema) -> Plan {
    let mut registry = Registry::new();
    for (index, fields) in schema.iter().enumerate() {
        let name = TypeName::new("pp", &format!("T{index}")).unwrap();
        registry
            .add_message_text(&name, &definition_text(fields), Dialect::Ros2)
            .unwrap();
    }
    Plan::compile(&registry, &TypeName::new("pp", "T0").unwrap()).unwrap()
}

/// A generated value that owns its bytes; [`to_tree`] turns it into borrowing tree values.
#[derive(Debug)]
enum Gen {
    Scalar(Value<'static>),
    Str(Vec<u8>),
    Wide(Vec<u8>),
    Array(PrimitiveKind, Vec<u8>),
    Strings(Vec<Vec<u8>>),
    Wides(Vec<Vec<u8>>),
    Message(Vec<Gen>),
    Messages(Vec<Vec<Gen>>),
}

/// A small deterministic generator (xorshift64*).
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Up to `max` bytes, any values but NUL (a NUL would end the string early for other
    /// readers; ours keeps it, see the edge cases).
    fn string(&mut self, max: u64) -> Vec<u8> {
        let len = self.below(max + 1) as usize;
        (0..len).map(|_| (self.next() as u8).max(1)).collect()
    }

    /// Up to `max` UTF-16 code units, 4 little-endian bytes each.
    fn wide(&mut self, max: u64) -> Vec<u8> {
        let len = self.below(max + 1) as usize;
        (0..len)
            .flat_map(|_| (self.next() as u16 as u32).to_le_bytes())
            .collect()
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

fn kind_of(name: &str) -> Option<PrimitiveKind> {
    Some(match name {
        "bool" => PrimitiveKind::Bool,
        "int8" => PrimitiveKind::Int8,
        "byte" | "char" | "uint8" => PrimitiveKind::UInt8,
        "int16" => PrimitiveKind::Int16,
        "uint16" => PrimitiveKind::UInt16,
        "int32" => PrimitiveKind::Int32,
        "uint32" => PrimitiveKind::UInt32,
        "int64" => PrimitiveKind::Int64,
        "uint64" => PrimitiveKind::UInt64,
        "float32" => PrimitiveKind::Float32,
        "float64" => PrimitiveKind::Float64,
        _ => return None,
    })
}

fn scalar(kind: PrimitiveKind, random: &mut Random) -> Value<'static> {
    let bits = random.next();
    match kind {
        PrimitiveKind::Bool => Value::Bool(bits & 1 == 1),
        PrimitiveKind::Int8 => Value::Int8(bits as i8),
        PrimitiveKind::UInt8 => Value::UInt8(bits as u8),
        PrimitiveKind::Int16 => Value::Int16(bits as i16),
        PrimitiveKind::UInt16 => Value::UInt16(bits as u16),
        PrimitiveKind::Int32 => Value::Int32(bits as i32),
        PrimitiveKind::UInt32 => Value::UInt32(bits as u32),
        PrimitiveKind::Int64 => Value::Int64(bits as i64),
        PrimitiveKind::UInt64 => Value::UInt64(bits),
        // Any bit pattern, NaNs with payloads included.
        PrimitiveKind::Float32 => Value::Float32(f32::from_bits(bits as u32)),
        PrimitiveKind::Float64 => Value::Float64(f64::from_bits(bits)),
    }
}

fn one(name: &str, random: &mut Random) -> Gen {
    match name {
        "string" => Gen::Str(random.string(5)),
        "string<=3" => Gen::Str(random.string(3)),
        "wstring" => Gen::Wide(random.wide(4)),
        "wstring<=2" => Gen::Wide(random.wide(2)),
        "time" | "duration" => Gen::Message(vec![
            Gen::Scalar(Value::Int32(random.next() as i32)),
            Gen::Scalar(Value::UInt32(random.next() as u32)),
        ]),
        other => Gen::Scalar(scalar(kind_of(other).unwrap(), random)),
    }
}

fn generate(schema: &Schema, index: usize, random: &mut Random) -> Vec<Gen> {
    schema[index]
        .iter()
        .map(|(elem, array)| {
            let count = match array {
                Array::Scalar => None,
                Array::Fixed(n) => Some(usize::from(*n)),
                Array::Variable => Some(random.below(4) as usize),
                Array::Bounded(n) => Some(random.below(u64::from(*n) + 1) as usize),
            };
            match (elem, count) {
                (Elem::Prim(name), None) => one(name, random),
                (Elem::Prim(name), Some(n)) => match kind_of(name) {
                    Some(PrimitiveKind::Bool) => Gen::Array(
                        PrimitiveKind::Bool,
                        (0..n).map(|_| random.next() as u8 & 1).collect(),
                    ),
                    // Array elements are raw bytes: any bit pattern is kept.
                    Some(kind) => Gen::Array(kind, random.bytes(n * kind.size())),
                    None => {
                        let items: Vec<Gen> = (0..n).map(|_| one(name, random)).collect();
                        if name.starts_with("wstring") {
                            Gen::Wides(
                                items
                                    .into_iter()
                                    .map(|g| match g {
                                        Gen::Wide(w) => w,
                                        _ => unreachable!(),
                                    })
                                    .collect(),
                            )
                        } else if name.starts_with("string") {
                            Gen::Strings(
                                items
                                    .into_iter()
                                    .map(|g| match g {
                                        Gen::Str(s) => s,
                                        _ => unreachable!(),
                                    })
                                    .collect(),
                            )
                        } else {
                            Gen::Messages(
                                items
                                    .into_iter()
                                    .map(|g| match g {
                                        Gen::Message(m) => m,
                                        _ => unreachable!(),
                                    })
                                    .collect(),
                            )
                        }
                    }
                },
                (Elem::Message(child), None) => Gen::Message(generate(schema, *child, random)),
                (Elem::Message(child), Some(n)) => {
                    Gen::Messages((0..n).map(|_| generate(schema, *child, random)).collect())
                }
            }
        })
        .collect()
}

fn wide(bytes: &[u8]) -> WideString<'_> {
    WideString::new(bytes, ByteOrder::LittleEndian).unwrap()
}

fn to_tree<'a>(fields: &'a [Gen], tree: &mut Tree<'a>) -> Vec<Value<'a>> {
    fields
        .iter()
        .map(|field| match field {
            Gen::Scalar(value) => *value,
            Gen::Str(bytes) => Value::String(bytes),
            Gen::Wide(bytes) => Value::WString(wide(bytes)),
            Gen::Array(kind, bytes) => {
                Value::Array(PrimitiveArray::new(*kind, bytes, ByteOrder::LittleEndian).unwrap())
            }
            Gen::Strings(items) => tree.push_strings(items.iter().map(Vec::as_slice)),
            Gen::Wides(items) => tree.push_wstrings(items.iter().map(|w| wide(w))),
            Gen::Message(inner) => {
                let values = to_tree(inner, tree);
                tree.push_message(values)
            }
            Gen::Messages(items) => {
                let elements: Vec<Value<'a>> = items
                    .iter()
                    .map(|inner| {
                        let values = to_tree(inner, tree);
                        tree.push_message(values)
                    })
                    .collect();
                tree.push_messages(elements)
            }
        })
        .collect()
}

/// Values equal, floats by their bits (NaN payloads included).
fn same(a: Value<'_>, b: Value<'_>) -> bool {
    match (a, b) {
        (Value::Float32(x), Value::Float32(y)) => x.to_bits() == y.to_bits(),
        (Value::Float64(x), Value::Float64(y)) => x.to_bits() == y.to_bits(),
        (a, b) => a == b,
    }
}

/// Two trees hold the same values (spans compared by their content, not their position).
fn same_tree(a: &Tree<'_>, a_value: Value<'_>, b: &Tree<'_>, b_value: Value<'_>) -> bool {
    match (a_value, b_value) {
        (Value::Message(x), Value::Message(y))
        | (Value::Messages(x), Value::Messages(y))
        | (Value::Strings(x), Value::Strings(y)) => {
            let (xs, ys) = (a.span(x), b.span(y));
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_tree(a, *x, b, *y))
        }
        (x, y) => same(x, y),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn random_values_round_trip_byte_exact(schema in schema(), seed in 1u64..) {
        let plan = compile(&schema);
        let mut random = Random(seed);
        let generated = generate(&schema, 0, &mut random);
        let mut tree = Tree::new();
        let root = to_tree(&generated, &mut tree);
        tree.set_root_fields(root);
        let root = Value::Message(tree.root());

        for encapsulation in [
            Encapsulation::CdrLe,
            Encapsulation::CdrBe,
            Encapsulation::PlainCdr2Le,
            Encapsulation::PlainCdr2Be,
        ] {
            let first = plan.encode_as(&tree, encapsulation).unwrap();
            prop_assert!(first.len() as u64 >= 4 + plan.min_size());
            let decoded = plan.decode_strict(&first).unwrap();
            prop_assert_eq!(decoded.encapsulation(), encapsulation);
            prop_assert_eq!(decoded.decoding().end(), first.len());
            // The decoded tree holds the generated values.
            prop_assert!(
                same_tree(&tree, root, decoded.tree(), Value::Message(decoded.tree().root())),
                "{:?}: {:?} != {:?}", encapsulation, tree, decoded.tree()
            );
            // And encodes to the same bytes.
            prop_assert_eq!(&decoded.encode().unwrap(), &first);
            #[cfg(feature = "serde")]
            {
                prop_assert_eq!(plan.view(&tree).to_json(), decoded.to_json());
                // The direct renderer writes what the serde implementation writes.
                prop_assert_eq!(serde_json::to_string(&decoded).unwrap(), decoded.to_json());
            }

            // Each top-level primitive, string or primitive array, read by a projection, is
            // the tree's value.
            let back = decoded.root();
            let names: Vec<String> = back
                .fields()
                .filter(|f| {
                    matches!(f.value(), Value::Array(_) | Value::String(_) | Value::WString(_))
                        || f.value().as_f64().is_some()
                        || matches!(f.value(), Value::Bool(_))
                })
                .map(|f| f.name().to_owned())
                .collect();
            let paths: Vec<&str> = names.iter().map(String::as_str).collect();
            let projection = plan.projection(&paths).unwrap();
            for (path, value) in paths.iter().zip(projection.extract(&first).unwrap()) {
                let expected = decoded.get(path).unwrap();
                prop_assert!(value.is_some_and(|v| same(v, expected)), "{}: {:?} != {:?}", path, value, expected);
            }
        }
    }

    #[test]
    fn random_bytes_never_panic(
        schema in schema(),
        header in prop_oneof![Just([0u8, 1, 0, 0]), Just([0, 0, 0, 0]), Just([0, 7, 0, 0])],
        data in proptest::collection::vec(any::<u8>(), 0..256),
    ) {
        let plan = compile(&schema);
        let message = [&header[..], &data].concat();
        match plan.decode(&message) {
            Ok(decoded) => {
                // Re-encoding is a fixed point: it decodes strictly to values that encode to
                // the same bytes again.
                let encoded = decoded.encode().unwrap_or_else(|e| {
                    // Only a bound that lenient decoding let through refuses to encode.
                    assert!(matches!(e, robolog_cdr::Error::BoundExceeded { .. }), "{e}");
                    Vec::new()
                });
                if !encoded.is_empty() {
                    let again = plan.decode_strict(&encoded).unwrap();
                    prop_assert_eq!(again.encode().unwrap(), encoded);
                }
                if decoded.decoding().is_regular() {
                    prop_assert!(decoded.warning().is_none());
                    prop_assert!(plan.decode_strict(&message).is_ok());
                } else {
                    prop_assert!(decoded.warning().is_some());
                }
                #[cfg(feature = "serde")]
                prop_assert_eq!(serde_json::to_string(&decoded).unwrap(), decoded.to_json());
            }
            Err(error) => {
                prop_assert!(error.path().is_some(), "decode errors name a field: {}", error);
                prop_assert!(plan.decode_strict(&message).is_err());
            }
        }
        let names: Vec<&str> = plan.field_names().collect();
        if let Ok(projection) = plan.projection(&names) {
            let _ = projection.extract(&message);
        }
    }
}
