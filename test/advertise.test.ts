// The default advertised host: the listener's address, else the first non-loopback one.
import { describe, expect, test } from "bun:test";
import { advertisedHost, firstNonLoopback, type Interfaces } from "../src/advertise.ts";

const lo = { address: "127.0.0.1", family: "IPv4", internal: true };
const lo6 = { address: "::1", family: "IPv6", internal: true };
const v4 = (address: string) => ({ address, family: "IPv4", internal: false });
const v6 = (address: string) => ({ address, family: "IPv6", internal: false });

describe("advertised host", () => {
  const ifaces: Interfaces = {
    lo: [lo, lo6],
    eth0: [v6("fe80::1"), v6("2001:db8::5"), v4("10.0.0.7")],
    eth1: [v4("192.168.1.9")],
  };

  test("a flag wins", () => {
    expect(advertisedHost("broker.example", "0.0.0.0", ifaces)).toEqual({
      host: "broker.example",
      from: "flag",
    });
  });

  test("a listener bound to one address advertises it", () => {
    expect(advertisedHost(undefined, "192.168.1.9", ifaces)).toEqual({
      host: "192.168.1.9",
      from: "listener",
    });
  });

  test("a wildcard listener advertises the first non-loopback IPv4 address", () => {
    for (const w of ["0.0.0.0", "::"]) {
      expect(advertisedHost(undefined, w, ifaces)).toEqual({ host: "10.0.0.7", from: "interface" });
    }
  });

  test("IPv6 only: the first global address, never link-local", () => {
    expect(firstNonLoopback({ lo: [lo], eth0: [v6("fe80::1"), v6("2001:db8::5")] })).toBe(
      "2001:db8::5",
    );
    expect(firstNonLoopback({ eth0: [v4("169.254.3.4")] })).toBeUndefined();
  });

  test("loopback only: 127.0.0.1", () => {
    expect(advertisedHost(undefined, "0.0.0.0", { lo: [lo, lo6] })).toEqual({
      host: "127.0.0.1",
      from: "loopback",
    });
  });
});
