//! mpi-ranks: a launch split across MPI ranks, each rank a holder of
//! resident buffers.
//!
//! `mpirun -n N clpart run ...` starts N processes. Rank 0 (the
//! [`Coordinator`]) holds the host arrays and the analysis; the other ranks
//! ([`serve`]) hold only what they are sent. For each launch, rank 0 divides
//! the work-groups of the split dimension among the ranks
//! (`launcher::split_groups` over the rank shares), asks the plan for each
//! rank's sets ([`launcher::Plan::rank_slices`]: the same schedule that
//! divides a launch among devices), and sends each rank the elements of its
//! sets that it lacks (runs packed into one message per rank), with the
//! kernel's range file entry the first time; what only another rank holds
//! (a halo) goes straight from that rank (`SendTo`, `RecvFrom`: rank 0
//! issues every such pair in one order, which each rank keeps, so every
//! blocking send meets its receive). Under `mpirun -n N clpart exec`, rank 0
//! is the OpenCL layer inside the application (its resident copies are
//! rank 0's buffers). Each rank runs its window on
//! its own devices with the single-process launcher
//! ([`launcher::Plan::set_group_window`], `BufferSet::launch`), and keeps
//! what it wrote. Which rank holds valid values of which elements is a
//! [`launcher::Coherence`] per buffer on rank 0 (rank `r` recorded as holder
//! `Device(r)`, rank 0's own copy as `Host`): a later launch sends only
//! what changed owner, so an iterative stencil moves only halos, and a
//! read on rank 0 ([`Coordinator::gather`]) fetches only the written ranges.
//!
//! The crate is empty without its `mpi` feature (the CLI's `mpi` feature
//! turns it on), so that a workspace build needs no MPI.
//!
//! Wire format: every command and reply is a JSON header ([`wire`]) and, when
//! it carries elements, one raw message of their bytes, in the order of the
//! header's runs. Rank 0 waits for each reply at most
//! [`Coordinator::timeout`]: a rank that reports a failure is named with
//! its reason; one that does not answer is named and the job aborted
//! (`MPI_Abort`). A rank that dies is reported by `mpirun`, which then
//! stops the job.
//!
//! Deliberately absent: diff-merged writes across ranks (such launches run
//! whole on rank 0, with the reason), the guard's unsplit re-run inside a
//! rank (a guard that fires on a rank is an error naming the rank), and
//! host arrays larger than one machine (every rank allocates each buffer
//! whole on its host; only the elements it is sent are filled).

#![cfg(feature = "mpi")]

mod coordinator;
mod shares;
mod wire;
mod worker;

pub use coordinator::{Coordinator, LaunchOutcome, RankLaunch, RankTotals};
pub use shares::{rank_shares, rebalance};
pub use worker::serve;

use mpi::traits::*;

/// Everything that goes wrong between ranks.
#[derive(Debug, thiserror::Error)]
pub enum RanksError {
    /// A rank reported a failure.
    #[error("rank {rank} failed: {why}")]
    RankFailed {
        /// The rank.
        rank: i32,
        /// Its message.
        why: String,
    },
    /// A rank did not answer in time.
    #[error("rank {rank} did not answer within {secs} s ({waiting_for})")]
    Timeout {
        /// The rank.
        rank: i32,
        /// The time limit.
        secs: u64,
        /// What rank 0 was waiting for.
        waiting_for: String,
    },
    /// A message that does not parse or does not fit.
    #[error("rank {rank}: bad message: {message}")]
    Protocol {
        /// The rank that sent it.
        rank: i32,
        /// What is wrong.
        message: String,
    },
    /// The launcher failed on rank 0.
    #[error(transparent)]
    Launch(#[from] launcher::LaunchError),
}

/// Result with [`RanksError`].
pub type Result<T> = std::result::Result<T, RanksError>;

/// The MPI world of this process: initialized only when `mpirun` (or
/// another PMI launcher) started it with more than one rank.
pub struct World {
    // finalizes MPI when dropped
    _universe: mpi::environment::Universe,
    world: mpi::topology::SimpleCommunicator,
}

impl World {
    /// The world when this process is one of several MPI ranks (Open MPI's
    /// `OMPI_COMM_WORLD_SIZE` or PMI's `PMI_SIZE` above 1); `None` otherwise,
    /// and MPI is not initialized.
    pub fn from_env() -> Option<World> {
        Self::place_from_env()?;
        let universe = mpi::initialize()?;
        let world = universe.world();
        Some(World {
            _universe: universe,
            world,
        })
    }

    /// [`World::from_env`] for a process whose calls into MPI may come from
    /// any of its threads, one at a time (`MPI_THREAD_SERIALIZED`): the
    /// OpenCL layer inside an application, whose launches and reads come
    /// from the application's threads. `None` also where the MPI library
    /// cannot give that level.
    pub fn from_env_serialized() -> Option<World> {
        Self::place_from_env()?;
        let (universe, level) = mpi::initialize_with_threading(mpi::Threading::Serialized)?;
        if level < mpi::Threading::Serialized {
            return None;
        }
        let world = universe.world();
        Some(World {
            _universe: universe,
            world,
        })
    }

    /// This process's rank and the number of ranks, as the launcher
    /// (`mpirun`, or PMI) tells it in the environment, without starting
    /// MPI: `None` outside a job of more than one rank. A process may read
    /// it and leave MPI to a child it runs (`clpart exec` on rank 0).
    pub fn place_from_env() -> Option<(u32, u32)> {
        let var = |names: [&str; 2]| {
            names
                .iter()
                .find_map(|v| std::env::var(v).ok()?.trim().parse::<u32>().ok())
        };
        let size = var(["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"])?;
        let rank = var(["OMPI_COMM_WORLD_RANK", "PMI_RANK"]).unwrap_or(0);
        (size >= 2).then_some((rank, size))
    }

    /// This process's rank.
    pub fn rank(&self) -> i32 {
        self.world.rank()
    }

    /// Number of ranks.
    pub fn size(&self) -> i32 {
        self.world.size()
    }

    /// Stops every rank of the job with `code` (`MPI_Abort`).
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}

/// The test-only fault of this rank (`CLPART_TEST_RANK_FAULT=RANK:KIND`,
/// KIND one of `abort`, `exit`, `error`, `hang`), injected when it receives
/// its first launch: the fault tests' way to make a rank fail or die.
#[doc(hidden)]
pub const TEST_FAULT_VAR: &str = "CLPART_TEST_RANK_FAULT";
