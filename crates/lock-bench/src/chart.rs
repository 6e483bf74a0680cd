//! Draws the report's chart: one horizontal bar per system for W1 throughput, labelled with the
//! number and the p99 latency. Text uses DejaVu Sans from the machine's fonts.

use std::io;
use std::path::Path;

use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use crate::report::Measurement;

const FONT_FILES: [&str; 2] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
];

/// Registers DejaVu Sans as the charts' `sans-serif`, once a process.
///
/// # Errors
/// When the font is not on the machine, or cannot be loaded.
pub fn register_sans_serif() -> io::Result<()> {
    static REGISTERED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            let font = FONT_FILES
                .iter()
                .find_map(|file| std::fs::read(file).ok())
                .ok_or("DejaVuSans.ttf not found: apt-get install fonts-dejavu-core")?;
            register_font(
                "sans-serif",
                FontStyle::Normal,
                Box::leak(font.into_boxed_slice()),
            )
            .map_err(|_| "the font could not be loaded".to_owned())
        })
        .clone()
        .map_err(io::Error::other)
}

pub fn draw(rows: &[&Measurement], path: &Path) -> io::Result<()> {
    register_sans_serif()?;

    // Each system: its name on one line, its bar below it, the figures after the bar.
    let (width, bar_height, top, left) = (1000u32, 58u32, 70u32, 20u32);
    let height = top + bar_height * rows.len().max(1) as u32 + 50;
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    let fail = |e: &dyn std::fmt::Display| io::Error::other(e.to_string());
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let title = ("sans-serif", 22).into_font();
    let label = ("sans-serif", 16).into_font();
    root.draw(&Text::new(
        "W1: acquire + release cycles per second (longer is better), p99 acquire latency",
        (20, 20),
        title,
    ))
    .map_err(|e| fail(&e))?;
    let max = rows.iter().map(|m| m.per_second).fold(1.0, f64::max);
    let span = f64::from(width - left - 200);
    for (i, row) in rows.iter().enumerate() {
        let y = (top + bar_height * i as u32) as i32;
        let length = ((row.per_second / max) * span).round() as i32;
        let color = if row.system.starts_with("lockd") {
            RGBColor(31, 119, 180)
        } else {
            RGBColor(160, 160, 160)
        };
        root.draw(&Text::new(row.system.clone(), (20, y), label.clone()))
            .map_err(|e| fail(&e))?;
        root.draw(&Rectangle::new(
            [
                (left as i32, y + 22),
                (left as i32 + length.max(1), y + bar_height as i32 - 8),
            ],
            color.filled(),
        ))
        .map_err(|e| fail(&e))?;
        let text = format!("{:.0}/s, p99 {:.1} ms", row.per_second, row.p99_ms);
        root.draw(&Text::new(
            text,
            (left as i32 + length + 8, y + 26),
            label.clone(),
        ))
        .map_err(|e| fail(&e))?;
    }
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}
