//! Group commit: many callers' small writes in one transaction, so one `fsync` (SQLite under
//! `synchronous = FULL`, PostgreSQL under `synchronous_commit = on`) covers a batch instead of
//! one request.
//!
//! A caller hands [`Db::write`](crate::Db::write) a [`WriteJob`] and waits. Writer tasks take
//! the jobs queued (the first one, then every job already waiting, up to [`MAX_BATCH`]), run them
//! in order in one write transaction and commit; each caller is answered only after that commit
//! returned, so what a caller is told was written is durable exactly as an autocommitted
//! statement would be. Jobs in one batch see each other's writes, in queue order: two consumes of
//! one nonce in one batch are still one `UPDATE` that changed the row and one that did not.
//!
//! When any job of a batch fails, or the commit does, the batch is rolled back and each of its
//! jobs is run again alone, in its own transaction, and answered with its own outcome; so a job
//! must be a conditional write whose second run after a failed first one is safe (the first
//! one's commit may have happened before its failure was reported: a consume then reads the row
//! as used, which refuses rather than accepts twice).
//!
//! SQLite has one writer at a time, so a SQLite [`Db`](crate::Db) has one writer task;
//! PostgreSQL has [`PG_WRITERS`], each its own connection, so a batch waiting on a row lock held
//! by another instance does not stall the rest.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use sqlx::{AnyConnection, AnyPool};
use tokio::sync::{Mutex, mpsc, oneshot};

use crate::{Backend, StoreError};

/// Most jobs one transaction carries.
pub const MAX_BATCH: usize = 256;

/// Writer tasks on a PostgreSQL database (SQLite has one).
pub const PG_WRITERS: usize = 4;

/// Jobs that may wait in the queue before callers wait to enqueue.
const QUEUE: usize = 4096;

/// A boxed future borrowing a connection for `'c`.
pub type JobFuture<'c, T> = Pin<Box<dyn Future<Output = Result<T, sqlx::Error>> + Send + 'c>>;

/// One caller's write, run inside a batch's transaction on `conn`. It may be run a second time
/// after a failed first run (see the module docs), so it must be a conditional write that is
/// safe to repeat: `INSERT … ON CONFLICT DO NOTHING`, `UPDATE … WHERE <still open>`.
pub trait WriteJob: Send + 'static {
    /// What the caller is answered once the batch committed.
    type Output: Send + 'static;

    /// Runs the job's statements on `conn` (inside a transaction the writer owns: never begin,
    /// commit or roll back here).
    fn run<'c>(&'c mut self, conn: &'c mut AnyConnection) -> JobFuture<'c, Self::Output>;
}

/// A queued job with its reply channel, type-erased.
trait Pending: Send {
    fn run<'c>(&'c mut self, conn: &'c mut AnyConnection) -> JobFuture<'c, ()>;
    /// Answers the caller: its output after a commit, or `error`.
    fn answer(self: Box<Self>, outcome: Result<(), StoreError>);
}

struct Slot<J: WriteJob> {
    job: J,
    output: Option<J::Output>,
    reply: oneshot::Sender<Result<J::Output, StoreError>>,
}

impl<J: WriteJob> Pending for Slot<J> {
    fn run<'c>(&'c mut self, conn: &'c mut AnyConnection) -> JobFuture<'c, ()> {
        Box::pin(async move {
            let output = self.job.run(conn).await?;
            self.output = Some(output);
            Ok(())
        })
    }

    fn answer(self: Box<Self>, outcome: Result<(), StoreError>) {
        let answer = match (outcome, self.output) {
            (Ok(()), Some(output)) => Ok(output),
            (Ok(()), None) => Err(StoreError::WriterGone),
            (Err(error), _) => Err(error),
        };
        // A caller that stopped waiting (its request was dropped) needs no answer.
        let _ = self.reply.send(answer);
    }
}

/// The queue into a database's writer tasks. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Writer {
    queue: mpsc::Sender<Box<dyn Pending>>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer").finish_non_exhaustive()
    }
}

impl Writer {
    /// Starts the writer tasks for `pool` on the current tokio runtime. They stop when every
    /// clone of the returned queue is dropped.
    pub(crate) fn start(pool: AnyPool, backend: Backend) -> Writer {
        let (queue, jobs) = mpsc::channel::<Box<dyn Pending>>(QUEUE);
        let jobs = Arc::new(Mutex::new(jobs));
        let writers = match backend {
            Backend::Sqlite => 1,
            Backend::Postgres => PG_WRITERS,
        };
        for _ in 0..writers {
            tokio::spawn(write_loop(pool.clone(), backend, jobs.clone()));
        }
        Writer { queue }
    }

    /// Queues `job` and waits for its batch to commit.
    pub(crate) async fn write<J: WriteJob>(&self, job: J) -> Result<J::Output, StoreError> {
        let (reply, answer) = oneshot::channel();
        let slot: Box<dyn Pending> = Box::new(Slot {
            job,
            output: None,
            reply,
        });
        self.queue
            .send(slot)
            .await
            .map_err(|_| StoreError::WriterGone)?;
        answer.await.map_err(|_| StoreError::WriterGone)?
    }
}

/// One writer task: takes a batch (holding the queue only while taking it), writes it, answers.
async fn write_loop(
    pool: AnyPool,
    backend: Backend,
    jobs: Arc<Mutex<mpsc::Receiver<Box<dyn Pending>>>>,
) {
    loop {
        let mut batch = Vec::new();
        {
            let mut jobs = jobs.lock().await;
            let Some(first) = jobs.recv().await else {
                return;
            };
            batch.push(first);
            while batch.len() < MAX_BATCH {
                match jobs.try_recv() {
                    Ok(job) => batch.push(job),
                    Err(_) => break,
                }
            }
        }
        write_batch(&pool, backend, batch).await;
    }
}

/// Runs `batch` in one transaction and answers every job; on any failure, rolls back and runs
/// each job alone.
async fn write_batch(pool: &AnyPool, backend: Backend, mut batch: Vec<Box<dyn Pending>>) {
    let together = run_together(pool, backend, &mut batch).await;
    if together.is_ok() {
        for job in batch {
            job.answer(Ok(()));
        }
        return;
    }
    if batch.len() == 1 {
        if let Some(job) = batch.pop() {
            job.answer(together);
        }
        return;
    }
    for mut job in batch {
        let mut one = [job];
        let outcome = run_together(pool, backend, &mut one).await;
        let [only] = one;
        job = only;
        job.answer(outcome);
    }
}

/// Begins a write transaction, runs `jobs` in order, commits. Dropping the transaction on an
/// error rolls it back.
async fn run_together(
    pool: &AnyPool,
    backend: Backend,
    jobs: &mut [Box<dyn Pending>],
) -> Result<(), StoreError> {
    let mut tx = match backend {
        Backend::Sqlite => pool.begin_with("BEGIN IMMEDIATE").await?,
        Backend::Postgres => pool.begin().await?,
    };
    for job in jobs.iter_mut() {
        job.run(&mut tx).await?;
    }
    tx.commit().await?;
    Ok(())
}
