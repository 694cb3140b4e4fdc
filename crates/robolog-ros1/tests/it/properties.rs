//! Property tests: random definitions with random values round-trip encode → decode → encode
//! byte-exact, and random bytes never make the decoder panic.

use proptest::prelude::*;
use robolog_msg::{Dialect, Registry, TypeName};
use robolog_ros1::{Duration, Plan, PrimitiveArray, PrimitiveKind, Time, Tree, Value};

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
}

type Schema = Vec<Vec<(Elem, Array)>>;

const PRIMITIVES: [&str; 16] = [
    "bool", "byte", "char", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
    "uint64", "float32", "float64", "string", "time", "duration",
];

fn schema() -> impl Strategy<Value = Schema> {
    (1usize..5).prop_flat_map(|types| {
        (0..types)
            .map(|index| {
                let elem = (0usize..PRIMITIVES.len() + 3).prop_map(move |choice| {
                    if choice < PRIMITIVES.len() || index + 1 >= types {
                        Elem::Prim(PRIMITIVES[choice % PRIMITIVES.len()])
                    } else {
                        Elem::Message(index + 1 + choice % (types - index - 1))
                    }
                });
                let array = prop_oneof![
                    3 => Just(Array::Scalar),
                    1 => (0u8..4).prop_map(Array::Fixed),
                    1 => Just(Array::Variable),
                ];
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
            .add_message_text(&name, &definition_text(fields), Dialect::Ros1)
            .unwrap();
    }
    Plan::compile(&registry, &TypeName::new("pp", "T0").unwrap()).unwrap()
}

/// A generated value that owns its bytes; [`to_tree`] turns it into borrowing tree values.
#[derive(Debug)]
enum Gen {
    Scalar(Value<'static>),
    Str(Vec<u8>),
    Array(PrimitiveKind, Vec<u8>),
    Strings(Vec<Vec<u8>>),
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

    fn string(&mut self) -> Vec<u8> {
        let len = self.below(6) as usize;
        self.bytes(len)
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

fn kind_of(name: &str) -> Option<PrimitiveKind> {
    Some(match name {
        "bool" => PrimitiveKind::Bool,
        "byte" | "int8" => PrimitiveKind::Int8,
        "char" | "uint8" => PrimitiveKind::UInt8,
        "int16" => PrimitiveKind::Int16,
        "uint16" => PrimitiveKind::UInt16,
        "int32" => PrimitiveKind::Int32,
        "uint32" => PrimitiveKind::UInt32,
        "int64" => PrimitiveKind::Int64,
        "uint64" => PrimitiveKind::UInt64,
        "float32" => PrimitiveKind::Float32,
        "float64" => PrimitiveKind::Float64,
        "time" => PrimitiveKind::Time,
        "duration" => PrimitiveKind::Duration,
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
        PrimitiveKind::Time => Value::Time(Time {
            secs: bits as u32,
            nsecs: (bits >> 32) as u32,
        }),
        PrimitiveKind::Duration => Value::Duration(Duration {
            secs: bits as i32,
            nsecs: (bits >> 32) as i32,
        }),
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
            };
            match (elem, count) {
                (Elem::Prim("string"), None) => Gen::Str(random.string()),
                (Elem::Prim("string"), Some(n)) => {
                    Gen::Strings((0..n).map(|_| random.string()).collect())
                }
                (Elem::Prim(name), None) => Gen::Scalar(scalar(kind_of(name).unwrap(), random)),
                (Elem::Prim(name), Some(n)) => {
                    let kind = kind_of(name).unwrap();
                    // Array elements are raw bytes: any byte is kept, bools included.
                    Gen::Array(kind, random.bytes(n * kind.size()))
                }
                (Elem::Message(child), None) => Gen::Message(generate(schema, *child, random)),
                (Elem::Message(child), Some(n)) => {
                    Gen::Messages((0..n).map(|_| generate(schema, *child, random)).collect())
                }
            }
        })
        .collect()
}

fn to_tree<'a>(fields: &'a [Gen], tree: &mut Tree<'a>) -> Vec<Value<'a>> {
    fields
        .iter()
        .map(|field| match field {
            Gen::Scalar(value) => *value,
            Gen::Str(bytes) => Value::String(bytes),
            Gen::Array(kind, bytes) => Value::Array(PrimitiveArray::new(*kind, bytes).unwrap()),
            Gen::Strings(items) => tree.push_strings(items.iter().map(Vec::as_slice)),
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

        let first = plan.encode(&tree).unwrap();
        let decoded = plan.decode_strict(&first).unwrap();
        let second = decoded.encode().unwrap();
        prop_assert_eq!(&first, &second);
        if let Some(size) = plan.fixed_size() {
            prop_assert_eq!(first.len() as u64, size);
        }
        prop_assert!(first.len() as u64 >= plan.min_size());

        // The decoded tree holds the generated values (floats compared by bits).
        let built = plan.view(&tree);
        let back = decoded.root();
        for (ours, theirs) in built.fields().zip(back.fields()) {
            match (ours.value(), theirs.value()) {
                (Value::Float32(a), Value::Float32(b)) => prop_assert_eq!(a.to_bits(), b.to_bits()),
                (Value::Float64(a), Value::Float64(b)) => prop_assert_eq!(a.to_bits(), b.to_bits()),
                (a @ (Value::Message(_) | Value::Messages(_) | Value::Strings(_)), b) => {
                    prop_assert_eq!(a.kind_name(), b.kind_name());
                }
                (a, b) => prop_assert_eq!(a, b),
            }
        }
        #[cfg(feature = "serde")]
        {
            prop_assert_eq!(built.to_json(), decoded.to_json());
            // The direct renderer writes what the serde implementation writes.
            prop_assert_eq!(serde_json::to_string(&decoded).unwrap(), decoded.to_json());
        }

        // Each top-level primitive, read by a projection, is the tree's value.
        let names: Vec<String> = back
            .fields()
            .filter(|f| matches!(f.value(), Value::Array(_) | Value::String(_)) || f.value().as_f64().is_some())
            .map(|f| f.name().to_owned())
            .collect();
        let paths: Vec<&str> = names.iter().map(String::as_str).collect();
        let projection = plan.projection(&paths).unwrap();
        for (path, value) in paths.iter().zip(projection.extract(&first).unwrap()) {
            let expected = decoded.get(path).unwrap();
            match (value, expected) {
                (Some(Value::Float32(a)), Value::Float32(b)) => prop_assert_eq!(a.to_bits(), b.to_bits()),
                (Some(Value::Float64(a)), Value::Float64(b)) => prop_assert_eq!(a.to_bits(), b.to_bits()),
                (value, expected) => prop_assert_eq!(value, Some(expected)),
            }
        }
    }

    #[test]
    fn random_bytes_never_panic(schema in schema(), data in proptest::collection::vec(any::<u8>(), 0..256)) {
        let plan = compile(&schema);
        match plan.decode(&data) {
            Ok(decoded) => {
                // Re-encoding is a fixed point: same length, and it decodes to the same values
                // (scalar bools other than 0/1 are the one thing encoding normalises).
                let encoded = decoded.encode().unwrap();
                prop_assert_eq!(encoded.len(), data.len() - decoded.trailing_bytes());
                let again = plan.decode_strict(&encoded).unwrap();
                prop_assert_eq!(again.encode().unwrap(), encoded);
                #[cfg(feature = "serde")]
                prop_assert_eq!(serde_json::to_string(&decoded).unwrap(), decoded.to_json());
            }
            Err(error) => {
                prop_assert!(error.path().is_some(), "decode errors name a field: {}", error);
            }
        }
    }
}
