//! The lines of a text log (cuzk or JSON lines), decoded on every core. Decoding a line
//! (unwrapping, splitting, parsing numbers, interning) is the reader's expensive part; it
//! was one thread's work while a second thread only collected the results, so a
//! million-event log took ~0.4 s to decode on a two-core machine with one core mostly idle.
//!
//! Here the reading thread only cuts the input into [`Chunk`]s of whole lines (about
//! [`CHUNK_BYTES`] each) and numbers them; decoding threads turn each chunk into a batch of
//! items; one assembling thread takes the batches back in input order. Chunks are dealt
//! round-robin and taken back in the same rotation, so the order needs no sorting and the
//! memory in flight is bounded by the channels. A decoder is made fresh for each chunk
//! (`make`): whatever it interns (cuzk job ids) is local to its batch, and the assembler
//! maps it onto the run's table in input order — the same ids, in the same order, as one
//! decoder over the whole input. An input of one chunk is decoded on the calling thread.

use std::io::BufRead;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use crate::event::Run;
use crate::read::ReadError;

/// About this many bytes per chunk: a chunk ends at the first line end from here on (a
/// longer line makes a longer chunk).
pub const CHUNK_BYTES: usize = 1 << 18;

/// Items reserved for a chunk's batch at most (one per 64 bytes of the chunk, below that).
const ITEMS_RESERVED: usize = 1 << 15;

/// At most this many decoding threads (each holds a few chunks in flight).
const MAX_DECODERS: usize = 8;

/// Chunks queued per decoding thread, and batches per decoding thread waiting for the
/// assembler.
const QUEUED: usize = 2;

/// Whole lines of the input, and the number of the first.
pub(crate) struct Chunk {
    first_line: u64,
    bytes: Vec<u8>,
}

impl Chunk {
    /// The lines with their numbers: `\n`-separated, the last one unterminated when the
    /// input does not end with a newline.
    fn lines(&self) -> impl Iterator<Item = (u64, &[u8])> {
        let b = &self.bytes[..];
        let mut start = 0;
        let mut n = self.first_line;
        std::iter::from_fn(move || {
            if start >= b.len() {
                return None;
            }
            let end = memchr::memchr(b'\n', &b[start..]).map_or(b.len(), |i| start + i);
            let line = &b[start..end];
            start = end + 1;
            n += 1;
            Some((n - 1, line))
        })
    }
}

/// A chunk decoded: its items in order, and what the lines were.
pub(crate) struct Batch<I> {
    pub items: Vec<(u64, I)>,
    /// Lines that are not text (invalid UTF-8 or NUL bytes).
    binary: u64,
    /// The chunk's first non-blank lines (at most [`SAMPLES`]), cut to [`SAMPLE_CHARS`].
    samples: Vec<(u64, String)>,
}

/// How many first lines are kept to describe an input, and how much of each.
const SAMPLES: usize = 3;
const SAMPLE_CHARS: usize = 100;

/// What the lines of the whole input were: lines that are not text, and the first
/// non-blank ones (for the warning when nothing could be read from it).
#[derive(Default)]
pub(crate) struct Seen {
    pub binary: u64,
    pub samples: Vec<(u64, String)>,
}

impl Seen {
    fn add<I>(&mut self, b: &mut Batch<I>) {
        self.binary += b.binary;
        let room = SAMPLES.saturating_sub(self.samples.len());
        self.samples.extend(b.samples.drain(..).take(room));
    }
}

/// A line's text: trailing `\r`s cut; invalid UTF-8 replaced (into `lossy`), never fatal;
/// such a line, or one with a NUL byte, counted in `binary`.
fn text<'a>(mut line: &'a [u8], lossy: &'a mut String, binary: &mut u64) -> &'a str {
    while let [rest @ .., b'\r'] = line {
        line = rest;
    }
    match std::str::from_utf8(line) {
        Ok(s) => {
            if memchr::memchr(0, line).is_some() {
                *binary += 1;
            }
            s
        }
        Err(_) => {
            *binary += 1;
            *lossy = String::from_utf8_lossy(line).into_owned();
            lossy
        }
    }
}

/// A line as a sample: control characters dropped, cut to [`SAMPLE_CHARS`] characters.
fn sample(s: &str) -> String {
    let mut cut: String = s.chars().filter(|c| !c.is_control()).take(SAMPLE_CHARS).collect();
    if s.chars().count() > SAMPLE_CHARS {
        cut.push('…');
    }
    cut
}

/// Decode one chunk with a decoder of its own.
fn decode_chunk<I>(chunk: &Chunk, mut decode: impl FnMut(u64, &str) -> I) -> Batch<I> {
    let mut batch = Batch { items: Vec::with_capacity((chunk.bytes.len() / 64).min(ITEMS_RESERVED)), binary: 0, samples: Vec::new() };
    let mut lossy = String::new();
    for (n, line) in chunk.lines() {
        let s = text(line, &mut lossy, &mut batch.binary);
        if batch.samples.len() < SAMPLES && !s.trim().is_empty() {
            batch.samples.push((n, sample(s)));
        }
        batch.items.push((n, decode(n, s)));
    }
    batch
}

/// Cuts a byte source into chunks of whole lines, numbering them.
pub(crate) struct ChunkReader<'a, R: BufRead> {
    inner: &'a mut R,
    name: &'a str,
    /// The number of the next chunk's first line.
    next_line: u64,
    done: bool,
    /// [`CHUNK_BYTES`] (smaller in tests, to make many chunks of a small input).
    chunk_bytes: usize,
}

impl<'a, R: BufRead> ChunkReader<'a, R> {
    pub(crate) fn new(inner: &'a mut R, name: &'a str, chunk_bytes: usize) -> Self {
        ChunkReader { inner, name, next_line: 1, done: false, chunk_bytes: chunk_bytes.max(1) }
    }

    /// The next chunk, `None` at the end of the input.
    pub(crate) fn next_chunk(&mut self) -> Result<Option<Chunk>, ReadError> {
        if self.done {
            return Ok(None);
        }
        let mut bytes: Vec<u8> = Vec::with_capacity(self.chunk_bytes + (1 << 16).min(self.chunk_bytes));
        // Up to `chunk_bytes`, then on to the next line end (or the input's end). Each
        // byte is looked at once for a line end, so a line of any length reads in linear time.
        loop {
            let buf = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(source) => {
                    // The line being read when it failed.
                    let line = self.next_line + memchr::memchr_iter(b'\n', &bytes).count() as u64;
                    return Err(ReadError::Io { path: self.name.to_string(), line, source });
                }
            };
            if buf.is_empty() {
                self.done = true;
                break;
            }
            if bytes.len() < self.chunk_bytes {
                let take = buf.len().min(self.chunk_bytes - bytes.len());
                bytes.extend_from_slice(&buf[..take]);
                self.inner.consume(take);
                if bytes.last() == Some(&b'\n') && bytes.len() >= self.chunk_bytes {
                    break;
                }
                continue;
            }
            match memchr::memchr(b'\n', buf) {
                Some(i) => {
                    bytes.extend_from_slice(&buf[..=i]);
                    self.inner.consume(i + 1);
                    break;
                }
                None => {
                    let take = buf.len();
                    bytes.extend_from_slice(buf);
                    self.inner.consume(take);
                }
            }
        }
        if bytes.is_empty() {
            return Ok(None);
        }
        let chunk = Chunk { first_line: self.next_line, bytes };
        let newlines = memchr::memchr_iter(b'\n', &chunk.bytes).count() as u64;
        self.next_line += newlines + u64::from(chunk.bytes.last() != Some(&b'\n'));
        Ok(Some(chunk))
    }

    /// Chunks until the first non-blank line, which `detect` reads: its answer (`None`
    /// when every line is blank) and the chunks read, for the pipeline to decode.
    pub(crate) fn detect<F>(&mut self, detect: impl Fn(&str) -> F) -> Result<(Option<F>, Vec<Chunk>), ReadError> {
        let mut held = Vec::new();
        let (mut lossy, mut binary) = (String::new(), 0);
        while let Some(c) = self.next_chunk()? {
            let mut found = None;
            for (_, l) in c.lines() {
                let s = text(l, &mut lossy, &mut binary);
                if !s.trim().is_empty() {
                    found = Some(detect(s));
                    break;
                }
            }
            held.push(c);
            if found.is_some() {
                return Ok((found, held));
            }
        }
        Ok((None, held))
    }
}

/// Decoding threads for this machine: one core fewer than it has, at most
/// [`MAX_DECODERS`]. The reading and assembling threads take about one core between them
/// (on two cores, one decoder beside them read a million-event log in 0.42-0.44 s, two in
/// 0.44-0.60: the threads only took turns).
pub(crate) fn default_decoders() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1)).clamp(1, MAX_DECODERS)
}

/// Decode the input's lines on `decoders` threads and assemble them on another, in input
/// order (see the module doc): `held` first, then the rest of `reader`. `make` gives a
/// decoder for one chunk; `assemble` takes the batches in order. A read error stops the
/// reading; the assembler sees the end of the input and the error is returned.
pub(crate) fn pipeline<R, D, I>(
    reader: &mut ChunkReader<'_, R>,
    held: Vec<Chunk>,
    decoders: usize,
    make: impl Fn() -> D + Sync,
    assemble: impl FnOnce(&mut dyn Iterator<Item = Vec<(u64, I)>>) -> Run + Send,
) -> Result<(Run, Seen), ReadError>
where
    R: BufRead,
    D: FnMut(u64, &str) -> I,
    I: Send,
{
    // One chunk in all: decoded here, no thread started (small logs, tests).
    if reader.done && held.len() <= 1 {
        let mut seen = Seen::default();
        let mut batches = held.iter().map(|c| {
            let mut b = decode_chunk(c, make());
            seen.add(&mut b);
            b.items
        });
        let run = assemble(&mut batches);
        return Ok((run, seen));
    }
    let decoders = decoders.clamp(1, MAX_DECODERS);
    std::thread::scope(|sc| {
        let make = &make;
        let mut inputs: Vec<SyncSender<Chunk>> = Vec::with_capacity(decoders);
        let mut outputs: Vec<Receiver<Batch<I>>> = Vec::with_capacity(decoders);
        for _ in 0..decoders {
            let (tx_in, rx_in) = sync_channel::<Chunk>(QUEUED);
            let (tx_out, rx_out) = sync_channel::<Batch<I>>(QUEUED);
            sc.spawn(move || {
                for chunk in rx_in {
                    // The assembler has gone (it panicked): stop.
                    if tx_out.send(decode_chunk(&chunk, make())).is_err() {
                        break;
                    }
                    drop(chunk);
                }
            });
            inputs.push(tx_in);
            outputs.push(rx_out);
        }
        let assembler = sc.spawn(move || {
            let mut seen = Seen::default();
            let mut k = 0;
            // In the rotation the chunks were dealt in; the first decoder with nothing more
            // to give marks the end (it had the next chunk, if there was one).
            let mut batches = std::iter::from_fn(|| {
                let mut b = outputs[k % outputs.len()].recv().ok()?;
                k += 1;
                seen.add(&mut b);
                Some(b.items)
            });
            let run = assemble(&mut batches);
            (run, seen)
        });
        let mut failed: Option<ReadError> = None;
        let mut k = 0;
        let mut next = held.into_iter();
        loop {
            let chunk = match next.next() {
                Some(c) => c,
                None => match reader.next_chunk() {
                    Ok(Some(c)) => c,
                    Ok(None) => break,
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                },
            };
            if inputs[k % decoders].send(chunk).is_err() {
                break;
            }
            k += 1;
        }
        drop(inputs);
        let (run, seen) = assembler.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        match failed {
            Some(e) => Err(e),
            None => Ok((run, seen)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line, numbered, whatever the chunk size and line ends: the chunks of a text
    /// give back exactly its lines (as `str::lines` with `\r` trimmed), and line numbers
    /// run on across chunks.
    #[test]
    fn chunks_give_back_every_line_with_its_number() {
        const CHUNK: usize = 4096;
        let mut log = String::new();
        for i in 0..20_000 {
            match i % 7 {
                0 => log.push_str("\n"),
                1 => log.push_str(&format!("line {i}\r\n")),
                // Lines longer than a chunk, and shorter.
                2 => log.push_str(&"x".repeat(CHUNK / 3 + i % (3 * CHUNK))),
                _ => log.push_str(&format!("TIMELINE,{i},SYNTH_START,j{},partition=0\n", i / 10)),
            }
        }
        log.push_str("last line without newline");
        let mut src = std::io::BufReader::with_capacity(1000, log.as_bytes());
        let mut r = ChunkReader::new(&mut src, "t", CHUNK);
        let mut got: Vec<(u64, String)> = Vec::new();
        let mut chunks = 0;
        while let Some(c) = r.next_chunk().unwrap() {
            chunks += 1;
            let (mut lossy, mut binary) = (String::new(), 0);
            for (n, l) in c.lines() {
                got.push((n, text(l, &mut lossy, &mut binary).to_string()));
            }
            assert_eq!(binary, 0);
        }
        let want: Vec<(u64, String)> = log.lines().enumerate().map(|(i, l)| (i as u64 + 1, l.trim_end_matches('\r').to_string())).collect();
        assert!(chunks > 10, "{chunks} chunks");
        assert_eq!(got.len(), want.len());
        assert!(got == want, "lines differ");
    }

    #[test]
    fn not_text_is_counted_and_replaced() {
        let (mut lossy, mut binary) = (String::new(), 0);
        assert_eq!(text(b"ab\r\r", &mut lossy, &mut binary), "ab");
        assert_eq!(text(b"a\0b", &mut lossy, &mut binary), "a\0b");
        assert_eq!(text(b"a\xffb", &mut lossy, &mut binary), "a\u{fffd}b");
        assert_eq!(binary, 2);
    }

    /// A read that fails names the line it was reading, not the chunk's first.
    #[test]
    fn a_read_error_names_its_line() {
        struct Failing(Vec<u8>);
        impl std::io::Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                if self.0.is_empty() {
                    return Err(std::io::Error::other("disk gone"));
                }
                let n = buf.len().min(self.0.len()).min(7);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0.drain(..n);
                Ok(n)
            }
        }
        let mut src = std::io::BufReader::with_capacity(16, Failing(b"one\ntwo\nthree\nfou".to_vec()));
        let mut r = ChunkReader::new(&mut src, "f", 1 << 20);
        match r.next_chunk() {
            Err(ReadError::Io { line, path, .. }) => assert_eq!((line, path.as_str()), (4, "f")),
            Err(e) => panic!("another error: {e}"),
            Ok(c) => panic!("a chunk of {} bytes", c.map_or(0, |c| c.bytes.len())),
        }
    }
}
