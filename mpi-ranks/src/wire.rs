//! The messages between rank 0 and the other ranks: a JSON header, then
//! (when the header's runs carry elements) one raw message of their bytes.

use serde::{Deserialize, Serialize};

/// Tag of a command header (rank 0 → rank).
pub(crate) const TAG_CMD: i32 = 11;
/// Tag of a command's element bytes.
pub(crate) const TAG_CMD_DATA: i32 = 12;
/// Tag of a reply header (rank → rank 0).
pub(crate) const TAG_REPLY: i32 = 21;
/// Tag of a reply's element bytes.
pub(crate) const TAG_REPLY_DATA: i32 = 22;
/// Tag of element bytes one rank sends another (`SendTo`, `RecvFrom`).
pub(crate) const TAG_PEER_DATA: i32 = 31;

/// Inclusive element intervals of one buffer.
pub(crate) type Intervals = Vec<(i64, i64)>;

/// A command to a rank.
#[derive(Serialize, Deserialize, Debug)]
pub(crate) enum Cmd {
    /// Make buffer `id`: `len` zero elements of type `elem_type` (`elem_size` bytes).
    Alloc {
        id: u32,
        elem_type: String,
        elem_size: u32,
        len: u64,
    },
    /// Forget every buffer and plan.
    Clear,
    /// Forget buffer `id` (its owner released it).
    Free { id: u32 },
    /// Store the elements (the data message follows, in this order).
    Put {
        items: Vec<(u32, Intervals)>,
        bytes: u64,
    },
    /// Send these elements back (reply `Data`).
    Get { items: Vec<(u32, Intervals)> },
    /// Send these elements to rank `to` (one data message, no reply): a
    /// rank's halo goes straight to the rank that needs it. Rank 0 orders
    /// every `SendTo` and `RecvFrom` of a launch the same way on every rank,
    /// so each pair's blocking send and receive meet.
    SendTo {
        to: i32,
        items: Vec<(u32, Intervals)>,
    },
    /// Store the elements rank `from` sends (`bytes` of them).
    RecvFrom {
        from: i32,
        items: Vec<(u32, Intervals)>,
        bytes: u64,
    },
    /// A kernel's range file entry (RON), its program's source and build
    /// options, known from now on as plan `idx`.
    Plan {
        idx: u32,
        kernel_ron: String,
        source: String,
        build_options: Vec<String>,
    },
    /// Run plan `plan`'s work-groups `window` of the split dimension over
    /// the bound buffers, divided among this rank's devices (reply `Launched`).
    Launch(LaunchCmd),
    /// Leave the command loop.
    Quit,
}

/// One launch of a rank's window.
#[derive(Serialize, Deserialize, Debug)]
pub(crate) struct LaunchCmd {
    pub(crate) plan: u32,
    pub(crate) global: Vec<u64>,
    pub(crate) local: Vec<u64>,
    pub(crate) offset: Vec<u64>,
    /// By argument index.
    pub(crate) args: Vec<WireArg>,
    /// `(argument index, buffer id)`.
    pub(crate) bindings: Vec<(u32, u32)>,
    pub(crate) window: (u64, u64),
    /// Shares among the rank's own devices (`None`: even over all).
    pub(crate) shares: Option<Vec<(usize, f64)>>,
    pub(crate) unchecked: bool,
    pub(crate) mem_cap_bytes: Option<u64>,
}

/// One kernel argument's value.
#[derive(Serialize, Deserialize, Debug)]
pub(crate) enum WireArg {
    /// A scalar's little-endian bytes.
    Scalar(Vec<u8>),
    /// A buffer bound to a resident buffer (see `LaunchCmd::bindings`).
    Buffer,
    /// A `__local` argument of this many bytes.
    Local(u64),
}

/// A rank's answer.
#[derive(Serialize, Deserialize, Debug)]
pub(crate) enum Reply {
    /// The elements asked for (the data message follows).
    Data { bytes: u64 },
    /// The window ran.
    Launched(LaunchedReply),
    /// The command failed (why).
    Failed(String),
}

/// What a rank's launch did.
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub(crate) struct LaunchedReply {
    pub(crate) wall_ms: f64,
    pub(crate) n_devices: usize,
    pub(crate) bytes_to_devices: u64,
    pub(crate) bytes_from_devices: u64,
    pub(crate) kernel_ms: f64,
    pub(crate) guard_fired: bool,
}
