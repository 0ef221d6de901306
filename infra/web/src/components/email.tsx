// An email address (or an account's username, which for an invited account is its email) in a table's cell:
// it may break after the "@" and before each "." (<wbr>), so a long address takes two or three lines of its
// column rather than widening the table past the screen, and never breaks inside a word while those points fit.
// The text, its accessible name and what is copied stay the address as it is.
import { Fragment } from 'react';

/** The address cut where a line may end: after "@", before each ".". */
export const emailParts = (address: string): string[] => address.split(/(?<=@)|(?=\.)/).filter(Boolean);

export function Email({ address }: { address: string }) {
  return (
    <span className="email">
      {emailParts(address).map((part, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one fixed text, in order; they never move
        <Fragment key={i}>
          {i > 0 && <wbr />}
          {part}
        </Fragment>
      ))}
    </span>
  );
}
