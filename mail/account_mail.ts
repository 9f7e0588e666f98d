/**
 * The dashboard's own mails: the sign-up confirmation link, the notice to an address that already
 * has an account (so that sign-up answers the same either way), the password reset link, and the
 * link that confirms an address for an account's usage alerts.
 * Links are built on PUBLIC_URL, never on the request's Host header, which a client could set to
 * send a victim's token to its own site.
 */
import { resetLink } from "../metering/password_reset.ts";
import type { Mail } from "./smtp.ts";

export function signupMail(to: string, publicUrl: string, token: string): Mail {
  return {
    to,
    subject: "Confirm your Shelf account",
    text: [
      "Someone (we hope you) asked for a Shelf account with this address.",
      "",
      "Confirm it within 24 hours to create the account and get its credits:",
      `${publicUrl}/dashboard/verify?token=${token}`,
      "",
      "If it was not you, ignore this mail: no account is created.",
    ].join("\r\n"),
  };
}

/**
 * With a reset link: these mails share the address's hourly budget with reset mails, so one that
 * held none left a stranger able to use up the owner's resets by signing up three times (probe CQ).
 */
export function alreadyRegisteredMail(to: string, publicUrl: string, resetToken: string): Mail {
  return {
    to,
    subject: "Your Shelf account",
    text: [
      "Someone asked for a new Shelf account with this address, which already has one.",
      "",
      `Sign in: ${publicUrl}/dashboard/signin`,
      "Forgot the password? Choose a new one within an hour; every signed-in browser is then",
      `signed out: ${resetLink(publicUrl, resetToken)}`,
      "",
      "If it was not you, ignore this mail: nothing changed, and the password stays as it is.",
    ].join("\r\n"),
  };
}

export function resetMail(to: string, publicUrl: string, token: string): Mail {
  return {
    to,
    subject: "Reset your Shelf password",
    text: [
      "Someone (we hope you) asked to reset the password of the Shelf account with this address.",
      "",
      "Choose a new password within an hour; every signed-in browser is then signed out:",
      resetLink(publicUrl, token),
      "",
      "If it was not you, ignore this mail: the password stays as it is.",
    ].join("\r\n"),
  };
}

export function alertAddressMail(to: string, publicUrl: string, token: string): Mail {
  return {
    to,
    subject: "Send Shelf usage alerts to this address?",
    text: [
      "A Shelf account asked to send its usage alerts (at 80% and 100% of its monthly credits)",
      "to this address.",
      "",
      "Confirm within 24 hours to receive them:",
      `${publicUrl}/dashboard/alert-address?token=${token}`,
      "",
      "If you do not want them, ignore this mail: nothing is sent here unless you confirm.",
    ].join("\r\n"),
  };
}
