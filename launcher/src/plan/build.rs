//! The programs and kernel objects of a [`Plan`] per device
//! ([`DeviceKernels`]): built through the [`Runtime`]'s cache, ahead of a
//! launch ([`Plan::prepare`], [`Plan::prepare_split`], the devices' builds
//! side by side) or when a launch first needs them.
//!
//! [`Runtime`]: crate::runtime::Runtime

use std::sync::Mutex;

use opencl3::kernel::Kernel;

use super::{DeviceKernels, Plan};
use crate::error::{cl_err, LaunchError, Result};

impl Plan {
    /// Builds the subkernel (when the kernel can split) and the original
    /// kernel for these devices, ahead of the first launch. Launches do this
    /// themselves for devices not prepared yet; built programs are cached.
    pub fn prepare(&mut self, devices: &[usize]) -> Result<()> {
        self.prepare_some(devices, true)
    }

    /// [`Plan::prepare`] without the original kernel where the subkernel
    /// serves (a split launch runs only the subkernel; a launch that runs
    /// the kernel whole builds it then): half the builds of a kernel's
    /// first launch.
    pub fn prepare_split(&mut self, devices: &[usize]) -> Result<()> {
        self.prepare_some(devices, self.unsplit_reason.is_some())
    }

    fn prepare_some(&mut self, devices: &[usize], whole: bool) -> Result<()> {
        self.build_concurrently(devices, whole);
        for &d in devices {
            if self.unsplit_reason.is_none() {
                // what a launch with the guard on runs: the guarded subkernel,
                // or the unchecked one when the guard cannot check it
                let unchecked = self.guard.is_err();
                self.sub_kernel(d, unchecked)?;
            }
            if whole {
                self.whole_kernel(d)?;
            }
        }
        Ok(())
    }

    /// Builds the programs [`Plan::prepare`] needs on each platform's
    /// devices at once, one thread per platform (the drivers' compilers are
    /// the cost), the devices of one platform one after the other: one
    /// driver's compiler may not be safe to run on two threads (PoCL 3.1's
    /// LLVM code generation for two CPU devices at once read freed memory
    /// under valgrind). Errors are left for `prepare`, which finds the
    /// programs built or builds again and reports.
    fn build_concurrently(&self, devices: &[usize], whole: bool) {
        let mut platforms: Vec<(String, Vec<usize>)> = Vec::new();
        for &d in devices {
            let Ok(info) = self.runtime.device(d) else {
                continue;
            };
            match platforms.iter_mut().find(|p| p.0 == info.platform) {
                Some(p) => p.1.push(d),
                None => platforms.push((info.platform.clone(), vec![d])),
            }
        }
        if platforms.len() < 2 {
            return;
        }
        let sources = self.sources(whole);
        std::thread::scope(|scope| {
            for (_, on) in &platforms {
                let sources = &sources;
                let runtime = self.runtime.clone();
                scope.spawn(move || {
                    for &d in on {
                        for (name, source, options) in sources {
                            let _ = runtime.program(d, name, source, options);
                        }
                    }
                });
            }
        });
    }

    /// The programs (name, source, options) a device needs: the subkernel
    /// (when the kernel can split) and, with `whole`, the original kernel.
    fn sources(&self, whole: bool) -> Vec<(&str, &str, Vec<String>)> {
        let mut sources: Vec<(&str, &str, Vec<String>)> = Vec::new();
        if self.unsplit_reason.is_none() {
            if let Some(sub) = &self.kernel.subkernel {
                let mut options = self.build_options.clone();
                if self.guard.is_err() {
                    options.push("-DCLPART_UNCHECKED".into());
                }
                sources.push((&sub.name, &sub.source, options));
            }
        }
        if whole {
            sources.push((&self.kernel.name, &self.source, self.build_options.clone()));
        }
        sources
    }

    fn slot(&mut self, device: usize) -> Result<&mut DeviceKernels> {
        if !self.kernels.contains_key(&device) {
            let ctx = self.runtime.ctx(device)?;
            self.kernels.insert(
                device,
                DeviceKernels {
                    ctx,
                    sub: None,
                    sub_unchecked: None,
                    whole: None,
                    sub_args: Mutex::default(),
                    sub_unchecked_args: Mutex::default(),
                    whole_args: Mutex::default(),
                },
            );
        }
        Ok(self.kernels.get_mut(&device).expect("inserted above"))
    }

    /// Builds (once) the subkernel for a device, with the run-time guard or
    /// (`unchecked`) with the guard compiled out.
    pub(crate) fn sub_kernel(&mut self, device: usize, unchecked: bool) -> Result<()> {
        let slot = self.slot(device)?;
        if (if unchecked {
            &slot.sub_unchecked
        } else {
            &slot.sub
        })
        .is_some()
        {
            return Ok(());
        }
        let sub = self
            .kernel
            .subkernel
            .as_ref()
            .ok_or_else(|| LaunchError::RangeFile {
                kernel: self.kernel.name.clone(),
                message: "no subkernel".into(),
            })?;
        let mut options = self.build_options.clone();
        if unchecked {
            options.push("-DCLPART_UNCHECKED".into());
        }
        let program = self
            .runtime
            .program(device, &sub.name, &sub.source, &options)?;
        let info = self.runtime.device(device)?;
        let k = Kernel::create(&program, &sub.name)
            .map_err(|e| cl_err("clCreateKernel", Some(info.label()))(e))?;
        let slot = self.slot(device)?;
        if unchecked {
            slot.sub_unchecked = Some(k);
        } else {
            slot.sub = Some(k);
        }
        Ok(())
    }

    /// Builds (once) the original kernel for a device.
    pub(crate) fn whole_kernel(&mut self, device: usize) -> Result<()> {
        if self.slot(device)?.whole.is_some() {
            return Ok(());
        }
        let program =
            self.runtime
                .program(device, &self.kernel.name, &self.source, &self.build_options)?;
        let info = self.runtime.device(device)?;
        let k = Kernel::create(&program, &self.kernel.name)
            .map_err(|e| cl_err("clCreateKernel", Some(info.label()))(e))?;
        self.slot(device)?.whole = Some(k);
        Ok(())
    }
}
