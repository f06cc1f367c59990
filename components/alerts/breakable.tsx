import { Fragment } from 'react';

/** An id ("source/table/key", "host:port/path") that may break after its slashes, dots and colons rather than mid-word. */
export function Breakable({ text }: { text: string }) {
  const parts = text.split(/(?<=[/:.])/);
  return (
    <>
      {parts.map((part, i) => (
        <Fragment key={i}>
          {part}
          {i < parts.length - 1 ? <wbr /> : null}
        </Fragment>
      ))}
    </>
  );
}
