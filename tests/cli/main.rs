//! The single integration-test binary (one link for all end-to-end tests):
//! this file only declares the test modules and their shared support code.

mod analyze;
mod cases;
mod export;
mod export_exempt;
mod forwarded;
mod gateway;
mod generate;
mod haproxy;
mod hardening;
mod html_screenshot;
mod nginx;
mod prometheus;
mod redis;
mod report;
mod report_scope;
mod routes;
mod scale;
mod shapes;
mod simulate;
mod support;
mod traefik;
mod watch;
mod watch_replay;
