// Talking to the API server as the logged-in user: the session cookie goes with every request
// (same origin), and the UI only ever reads (GET). Streams are newline-delimited JSON or text,
// read as they arrive. Nothing polls.

/** An error carrying the API's Status (code, reason, message). */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function failure(res) {
  let message = `${res.status} ${res.statusText}`;
  try {
    const st = await res.json();
    if (st && st.message) message = st.message;
  } catch {
    // not a Status
  }
  if (res.status === 401) location.reload(); // the session ended: show the login page
  return new ApiError(res.status, message);
}

export async function getJSON(path, signal) {
  const res = await fetch(path, { credentials: 'same-origin', signal,
    headers: { accept: 'application/json' } });
  if (!res.ok) throw await failure(res);
  return res.json();
}

/** Calls onLine with each line of a streamed response until it ends or `signal` aborts. */
export async function streamLines(path, onLine, signal) {
  const res = await fetch(path, { credentials: 'same-origin', signal });
  if (!res.ok) throw await failure(res);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line) onLine(line);
    }
  }
  if (buf) onLine(buf);
}
