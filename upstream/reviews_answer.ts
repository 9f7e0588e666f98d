/**
 * What a reviews page says about the request: whether `page`, `star`, `sort` and `verified_only`
 * took effect, and the `note` that explains what did not.
 *
 * Since late 2024 Amazon serves one fixed set of top reviews to visitors who are not signed in
 * and ignores the filters, so without an operator-supplied session (`UPSTREAM_COOKIES_<CODE>`) a
 * filter counts as applied only where the page itself proves it (every review has the requested
 * star, every review is verified, its canonical link names the page asked for). With a session a
 * filter counts as applied when the page that answered still carries it in its URL and the page
 * does not contradict it (its reviews' stars or verified marks, its stated page, its sort menu).
 */
import type { Review } from "../schemas/resources.ts";
import { REVIEW_SORTS, REVIEW_STARS } from "./urls.ts";

export interface ReviewsVerdict {
  page: number;
  filters_applied: boolean;
  note: string | null;
}

const STAR_VALUE: Record<string, number> = { five: 5, four: 4, three: 3, two: 2, one: 1 };

export function judgeReviews(
  params: Record<string, unknown>,
  reviews: Review[],
  answeredUrl: string,
  authenticated: boolean,
  /** The page number the page itself states, if any (its canonical link). */
  statedPage: number | null = null,
  /** The sort key the page's sort menu shows, if it has one. */
  shownSort: string | null = null,
): ReviewsVerdict {
  const query = new URL(answeredUrl).searchParams;
  const kept = (name: string, value: string) => authenticated && query.get(name) === value;
  const notApplied: string[] = [];
  let requested = 0;

  const page = Number(params.page ?? 1);
  if (page > 1) {
    requested++;
    // The page's own canonical link proves it, signed in or not (probe AR: a page stating
    // pageNumber=10 was answered as page 1).
    // The page's own number, when it states one, is the proof either way: a signed-in URL that
    // kept pageNumber=3 on a page stating 5 was answered as applied and labelled 5 (probe DR).
    if (statedPage !== null ? statedPage !== page : !kept("pageNumber", String(page))) {
      notApplied.push(`page ${page}`);
    }
  }
  const star = params.star as string | undefined;
  if (star && star !== "all") {
    requested++;
    const proven = reviews.length > 0 &&
      reviews.every((r) => Math.round(r.rating) === STAR_VALUE[star]);
    const contradicted = reviews.some((r) => Math.round(r.rating) !== STAR_VALUE[star]);
    if (!proven && (contradicted || !kept("filterByStar", REVIEW_STARS[star]))) {
      notApplied.push(`star=${star}`);
    }
  }
  const sort = params.sort as string | undefined;
  if (sort) {
    requested++;
    // The page's sort menu contradicts a kept sortBy: signed in, a page in top-reviews order
    // answered `sort=recent` as applied (probe ES).
    const wanted = REVIEW_SORTS[sort];
    if (!kept("sortBy", wanted) || (shownSort !== null && shownSort !== wanted)) {
      notApplied.push(`sort=${sort}`);
    }
  }
  if (params.verified_only) {
    requested++;
    const proven = reviews.length > 0 && reviews.every((r) => r.verified_purchase);
    if (
      !proven &&
      (reviews.some((r) => !r.verified_purchase) || !kept("reviewerType", "avp_only_reviews"))
    ) {
      notApplied.push("verified_only");
    }
  }

  const notes: string[] = [];
  // The page it states, whatever was asked: a page stating pageNumber=10 answered for page 1
  // was labelled page 1 (probe DP).
  if (statedPage !== null && statedPage !== page && page === 1) {
    notes.push(`The marketplace answered page ${statedPage} of the reviews.`);
  }
  if (reviews.some((r) => r.author === null)) {
    notes.push("Reviewer names are not shown on this page, so author and author_id are null.");
  }
  if (notApplied.length) {
    const who = authenticated
      ? "The marketplace"
      : "The marketplace, for visitors who are not signed in,";
    notes.push(
      `${who} serves one fixed set of reviews: ${notApplied.join(", ")} could not be applied.`,
    );
  }
  return {
    page: statedPage ?? (notApplied.includes(`page ${page}`) ? 1 : page),
    filters_applied: requested > 0 && notApplied.length === 0,
    note: notes.length ? notes.join(" ") : null,
  };
}
